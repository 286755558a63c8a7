import { randomUUID, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { handler as updateOrganization } from '../../functions/organization/update-organization';
import { routes } from '../../functions/routes';
import { now, testClock } from '../../lib/clock';
import { addMember, createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { organizationRow } from '../harness/organizations';
import { UNKNOWN_ID } from '../harness/ids';

const patch = (caller: { accessToken?: string }, orgId: string, body: unknown) =>
  invoke(routes.updateOrganization, { token: caller.accessToken, path: { orgId }, body });

const bySlug = (caller: TestUser, slug: string) =>
  invoke(routes.getOrganizationBySlug, { token: caller.accessToken, path: { slug } });

describe('PATCH /organization/{orgId}', () => {
  it('saves every editable field and answers 201 with the updated details', async () => {
    // Prepare
    testClock.freeze();
    const owner = await createUser({ organizationName: 'Patch Happy LLP' });
    const before = await organizationRow(owner.organizationId);
    testClock.advance(60);
    const body = {
      email: 'Front.Desk@Example.com',
      contact: '  Jane Contact ',
      city: 'Boston',
      state: 'MA',
      country: 'US',
      description: 'Litigation support',
      phone: ['+1 617 555 0100', '(617) 555-0101'],
      logo: 'https://cdn.example.com/logo.png',
      metadata: { crmId: 'abc-123', tags: ['vip'] },
      autoAcceptInvitations: true,
      communicationPreferences: { weeklyDigest: false },
      address: {
        line1: ' 1 Main St ',
        line2: 'Suite 5',
        city: 'Boston',
        state: 'MA',
        postalCode: '02108',
        country: 'US',
      },
      bankLinkingTermsAccepted: true,
    };
    // Act
    const result = await patch(owner, owner.organizationId, body);
    // Assess
    const data = expectData(result, 201);
    expect(data.permission).toEqual({ role: 'owner' });
    expect(data.organization).toMatchObject({
      id: owner.organizationId,
      name: 'Patch Happy LLP',
      slug: 'patch-happy-llp',
      email: 'front.desk@example.com',
      contact: 'Jane Contact',
      city: 'Boston',
      state: 'MA',
      country: 'US',
      description: 'Litigation support',
      phone: ['+1 617 555 0100', '(617) 555-0101'],
      logo: 'https://cdn.example.com/logo.png',
      metadata: { crmId: 'abc-123', tags: ['vip'] },
      communicationPreferences: { weeklyDigest: false },
      address: {
        line1: '1 Main St',
        line2: 'Suite 5',
        city: 'Boston',
        state: 'MA',
        postalCode: '02108',
        country: 'US',
      },
      bankLinkingTerms: { accepted: true, acceptedAt: now().toISOString(), acceptedBy: owner.id },
      activePlan: null,
    });
    expect(data.organization.updatedAt).toBe(now().toISOString());
    const row = await organizationRow(owner.organizationId);
    expect(row).toMatchObject({
      email: 'front.desk@example.com',
      contact: 'Jane Contact',
      city: 'Boston',
      phone: body.phone,
      logo: body.logo,
      metadata: body.metadata,
      autoAcceptInvitations: true,
      communicationPreferences: { weeklyDigest: false },
      slug: before.slug,
    });
    expect(row.bankLinkingTermsAcceptedAt?.toISOString()).toBe(now().toISOString());
    expect(row.bankLinkingTermsAcceptedById).toBe(owner.id);
    expect(row.address).toEqual(data.organization.address);
    expect(row.createdAt.toISOString()).toBe(before.createdAt.toISOString());
    // A later GET answers the same.
    const fetched = expectData(
      await invoke(routes.getOrganization, { token: owner.accessToken, path: { orgId: owner.organizationId } }),
    );
    expect(fetched.organization).toEqual(data.organization);
  });

  it('leaves fields that are not sent as they were, and clears the logo with null', async () => {
    const owner = await createUser();
    expectData(await patch(owner, owner.organizationId, { city: 'Paris', logo: 'https://cdn.example.com/a.png' }), 201);
    const data = expectData(await patch(owner, owner.organizationId, { logo: null }), 201);
    expect(data.organization).toMatchObject({ city: 'Paris', logo: null });
    expect(await organizationRow(owner.organizationId)).toMatchObject({
      city: 'Paris',
      logo: null,
      bankLinkingTermsAcceptedAt: null,
    });
  });

  it('returns no address, empty communication preferences and terms not accepted for a new organization', async () => {
    const owner = await createUser();
    const data = expectData(
      await invoke(routes.getOrganization, { token: owner.accessToken, path: { orgId: owner.organizationId } }),
    );
    expect(data.organization).toMatchObject({
      address: null,
      communicationPreferences: {},
      bankLinkingTerms: { accepted: false, acceptedAt: null, acceptedBy: null },
    });
  });

  it('replaces the whole address (lines not sent are gone), drops keys it does not know, and clears it with null', async () => {
    const owner = await createUser();
    expectData(
      await patch(owner, owner.organizationId, {
        address: { line1: '1 Main St', city: 'Boston', postalCode: '02108' },
      }),
      201,
    );
    const replaced = expectData(
      await patch(owner, owner.organizationId, { address: { line1: '9 Elm St', country: 'US', floor: 3 } }),
      201,
    );
    expect(replaced.organization.address).toEqual({ line1: '9 Elm St', country: 'US' });
    expect((await organizationRow(owner.organizationId)).address).toEqual({ line1: '9 Elm St', country: 'US' });
    // Sending other fields leaves the address alone.
    expect(expectData(await patch(owner, owner.organizationId, { city: 'Paris' }), 201).organization.address).toEqual({
      line1: '9 Elm St',
      country: 'US',
    });
    const cleared = expectData(await patch(owner, owner.organizationId, { address: null }), 201);
    expect(cleared.organization.address).toBeNull();
    expect((await organizationRow(owner.organizationId)).address).toBeNull();
  });

  it('takes the address as a string too: the street line, replacing the stored address; blank clears it', async () => {
    const owner = await createUser();
    expectData(await patch(owner, owner.organizationId, { address: { line1: '1 Main St', city: 'Boston' } }), 201);
    const data = expectData(await patch(owner, owner.organizationId, { address: '  9 Elm St, Suite 4 ' }), 201);
    expect(data.organization.address).toEqual({ line1: '9 Elm St, Suite 4' });
    expect((await organizationRow(owner.organizationId)).address).toEqual({ line1: '9 Elm St, Suite 4' });
    const cleared = expectData(await patch(owner, owner.organizationId, { address: '   ' }), 201);
    expect(cleared.organization.address).toBeNull();
    expect((await organizationRow(owner.organizationId)).address).toBeNull();
  });

  it('replaces the communication preferences and returns them with the organization', async () => {
    const owner = await createUser();
    expectData(
      await patch(owner, owner.organizationId, {
        communicationPreferences: { weeklyDigest: true, channels: ['email'] },
      }),
      201,
    );
    const data = expectData(
      await patch(owner, owner.organizationId, { communicationPreferences: { weeklyDigest: false } }),
      201,
    );
    expect(data.organization.communicationPreferences).toEqual({ weeklyDigest: false });
    const fetched = expectData(
      await invoke(routes.getOrganization, { token: owner.accessToken, path: { orgId: owner.organizationId } }),
    );
    expect(fetched.organization.communicationPreferences).toEqual({ weeklyDigest: false });
  });

  it('records the bank-linking terms acceptance with its time and the accepting user', async () => {
    testClock.freeze();
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    const data = expectData(await patch(admin, owner.organizationId, { bankLinkingTermsAccepted: true }), 201);
    expect(data.organization.bankLinkingTerms).toEqual({
      accepted: true,
      acceptedAt: now().toISOString(),
      acceptedBy: admin.id,
    });
    const row = await organizationRow(owner.organizationId);
    expect(row.bankLinkingTermsAcceptedAt?.toISOString()).toBe(now().toISOString());
    expect(row.bankLinkingTermsAcceptedById).toBe(admin.id);
  });

  it('keeps the first acceptance (time and user) when the terms are accepted again', async () => {
    testClock.freeze();
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    const first = expectData(await patch(owner, owner.organizationId, { bankLinkingTermsAccepted: true }), 201)
      .organization.bankLinkingTerms;
    testClock.advance(600);
    const again = expectData(await patch(admin, owner.organizationId, { bankLinkingTermsAccepted: true }), 201);
    expect(again.organization.bankLinkingTerms).toEqual(first);
    expect(first).toMatchObject({ accepted: true, acceptedBy: owner.id });
  });

  it('withdraws the acceptance with false; a later acceptance is recorded anew', async () => {
    testClock.freeze();
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    expectData(await patch(owner, owner.organizationId, { bankLinkingTermsAccepted: true }), 201);
    const withdrawn = expectData(await patch(owner, owner.organizationId, { bankLinkingTermsAccepted: false }), 201);
    expect(withdrawn.organization.bankLinkingTerms).toEqual({ accepted: false, acceptedAt: null, acceptedBy: null });
    expect(await organizationRow(owner.organizationId)).toMatchObject({
      bankLinkingTermsAcceptedAt: null,
      bankLinkingTermsAcceptedById: null,
    });
    testClock.advance(60);
    const renewed = expectData(await patch(admin, owner.organizationId, { bankLinkingTermsAccepted: true }), 201);
    expect(renewed.organization.bankLinkingTerms).toEqual({
      accepted: true,
      acceptedAt: now().toISOString(),
      acceptedBy: admin.id,
    });
  });

  it('answers 201 with the unchanged details for an empty body', async () => {
    const owner = await createUser({ organizationName: 'Nothing Changes' });
    const before = await organizationRow(owner.organizationId);
    const data = expectData(await patch(owner, owner.organizationId, {}), 201);
    expect(data.organization).toMatchObject({
      name: 'Nothing Changes',
      slug: 'nothing-changes',
      updatedAt: before.updatedAt.toISOString(),
    });
  });

  it('regenerates the slug on rename; the old slug no longer finds the organization', async () => {
    // Prepare
    const owner = await createUser({ organizationName: 'Old Name Partners' });
    expectData(await bySlug(owner, 'old-name-partners'));
    // Act
    const data = expectData(await patch(owner, owner.organizationId, { name: '  Nouvelle Équipe  ' }), 201);
    // Assess
    expect(data.organization).toMatchObject({ name: 'Nouvelle Équipe', slug: 'nouvelle-equipe' });
    expect(await organizationRow(owner.organizationId)).toMatchObject({
      name: 'Nouvelle Équipe',
      slug: 'nouvelle-equipe',
    });
    expectError(await bySlug(owner, 'old-name-partners'), 403, 'NOT_A_MEMBER');
    expect(expectData(await bySlug(owner, 'nouvelle-equipe')).organization.id).toBe(owner.organizationId);
    // The old name is free again.
    const other = await createUser();
    expectData(
      await invoke(routes.createOrganization, { token: other.accessToken, body: { name: 'Old Name Partners' } }),
      201,
    );
  });

  it('lets an organization change the case of its own name', async () => {
    const owner = await createUser({ organizationName: 'case change llp' });
    const data = expectData(await patch(owner, owner.organizationId, { name: 'Case Change LLP' }), 201);
    expect(data.organization).toMatchObject({ name: 'Case Change LLP', slug: 'case-change-llp' });
  });

  it('gives a new name whose slug another organization holds a slug of its own', async () => {
    await createUser({ organizationName: 'Slug Holder' });
    const owner = await createUser({ organizationName: 'Slug Seeker' });
    const data = expectData(await patch(owner, owner.organizationId, { name: 'Slug-Holder!' }), 201);
    expect(data.organization.name).toBe('Slug-Holder!');
    expect(data.organization.slug).toMatch(/^slug-holder-[0-9a-f]{6}$/);
    expect((await organizationRow(owner.organizationId)).slug).toBe(data.organization.slug);
  });

  it.each([
    ['the same case', (name: string) => name],
    ['another case', (name: string) => name.toUpperCase()],
  ])('answers 400 ORGANIZATION_NAME_TAKEN for a name taken in %s, changing nothing', async (_label, variant) => {
    // Prepare
    const taken = `Already Taken ${randomBytes(3).toString('hex')}`;
    await createUser({ organizationName: taken });
    const owner = await createUser();
    const before = await organizationRow(owner.organizationId);
    // Act
    const result = await patch(owner, owner.organizationId, { name: variant(taken), city: 'Denver' });
    // Assess
    expectError(result, 400, 'ORGANIZATION_NAME_TAKEN');
    expect(await organizationRow(owner.organizationId)).toMatchObject({
      name: before.name,
      slug: before.slug,
      city: '',
    });
  });

  it('lets exactly one of two concurrent renames to the same name through', async () => {
    const first = await createUser();
    const second = await createUser();
    const name = `Contested ${randomBytes(3).toString('hex')}`;
    const results = await Promise.all([
      patch(first, first.organizationId, { name }),
      patch(second, second.organizationId, { name: name.toUpperCase() }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 400]);
    expectError(results.find((r) => r.status === 400)!, 400, 'ORGANIZATION_NAME_TAKEN');
    const names = [
      (await organizationRow(first.organizationId)).name,
      (await organizationRow(second.organizationId)).name,
    ];
    expect(names.filter((n) => n.toLowerCase() === name.toLowerCase())).toHaveLength(1);
  });

  it('accepts metadata of exactly 16 KB as JSON and communicationPreferences of exactly 4 KB', async () => {
    const owner = await createUser();
    const metadata = { blob: 'x'.repeat(16 * 1024 - JSON.stringify({ blob: '' }).length) };
    const communicationPreferences = { note: 'x'.repeat(4 * 1024 - JSON.stringify({ note: '' }).length) };
    expectData(await patch(owner, owner.organizationId, { metadata, communicationPreferences }), 201);
    expect(await organizationRow(owner.organizationId)).toMatchObject({ metadata, communicationPreferences });
  });

  it('lets an admin update the organization', async () => {
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    const data = expectData(await patch(admin, owner.organizationId, { description: 'Set by the admin' }), 201);
    expect(data.permission).toEqual({ role: 'admin' });
    expect((await organizationRow(owner.organizationId)).description).toBe('Set by the admin');
  });

  it.each([
    ['name: empty', { name: '' }, ['body.name']],
    ['name: blank', { name: '   ' }, ['body.name']],
    ['name: 101 chars', { name: 'n'.repeat(101) }, ['body.name']],
    ['name: 5', { name: 5 }, ['body.name']],
    ['name: null', { name: null }, ['body.name']],
    ['email: not-an-email', { email: 'not-an-email' }, ['body.email']],
    ['contact: 201 chars', { contact: 'c'.repeat(201) }, ['body.contact']],
    ['city: 12', { city: 12 }, ['body.city']],
    ['description: 2001 chars', { description: 'd'.repeat(2001) }, ['body.description']],
    ['phone: +1 555', { phone: '+1 555' }, ['body.phone']],
    ['phone: [5]', { phone: [5] }, ['body.phone.0']],
    ['phone: 11 items', { phone: Array.from({ length: 11 }, (_v, i) => `555-010${i}`) }, ['body.phone']],
    ['logo: not a url', { logo: 'not a url' }, ['body.logo']],
    ['logo: a javascript: url', { logo: 'javascript:alert(document.cookie)' }, ['body.logo']],
    ['logo: a data: url', { logo: 'data:text/html,<script>alert(1)</script>' }, ['body.logo']],
    ['logo: a NUL character', { logo: 'https://cdn.example.com/\u0000.png' }, ['body.logo']],
    ['description: a NUL character', { description: 'a\u0000b' }, ['body.description']],
    ['city: an unpaired surrogate', { city: 'Oslo\udc00' }, ['body.city']],
    ['name: a NUL character', { name: 'Acme\u0000' }, ['body.name']],
    ['phone: a NUL character', { phone: ['555\u0000'] }, ['body.phone.0']],
    [
      'metadata: a NUL character in a nested value',
      { metadata: { crm: { ids: ['a\u0000'] } } },
      ['body.metadata.crm.ids.0'],
    ],
    ['metadata: an unpaired surrogate', { metadata: { note: '\ud800' } }, ['body.metadata.note']],
    [
      'communicationPreferences: a NUL character in a key',
      { communicationPreferences: { 'e\u0000mail': true } },
      ['body.communicationPreferences'],
    ],
    ['metadata: over 16 KB as JSON', { metadata: { blob: 'x'.repeat(16 * 1024 - 10) } }, ['body.metadata']],
    ['metadata: over 16 KB in UTF-8 bytes', { metadata: { blob: '\u00e9'.repeat(8 * 1024) } }, ['body.metadata']],
    [
      'communicationPreferences: over 4 KB as JSON',
      { communicationPreferences: { note: 'x'.repeat(4 * 1024) } },
      ['body.communicationPreferences'],
    ],
    ['metadata: crm', { metadata: 'crm' }, ['body.metadata']],
    ['metadata: [1, 2]', { metadata: [1, 2] }, ['body.metadata']],
    ['communicationPreferences: true', { communicationPreferences: true }, ['body.communicationPreferences']],
    ['autoAcceptInvitations: yes', { autoAcceptInvitations: 'yes' }, ['body.autoAcceptInvitations']],
    ['bankLinkingTermsAccepted: 1', { bankLinkingTermsAccepted: 1 }, ['body.bankLinkingTermsAccepted']],
    ['bankLinkingTermsAccepted: null', { bankLinkingTermsAccepted: null }, ['body.bankLinkingTermsAccepted']],
    ['address: a string of 201 chars', { address: 'l'.repeat(201) }, ['body.address']],
    ['address: a number', { address: 7 }, ['body.address']],
    ['address: line1 of 201 chars', { address: { line1: 'l'.repeat(201) } }, ['body.address.line1']],
    ['address: postalCode of 21 chars', { address: { postalCode: '1'.repeat(21) } }, ['body.address.postalCode']],
    ['address: country 7', { address: { country: 7 } }, ['body.address.country']],
    ['address: a NUL character', { address: { city: 'Bo\u0000ston' } }, ['body.address.city']],
    ['name: 5, city: 7', { name: 5, city: 7 }, ['body.name', 'body.city']],
  ])('answers 400 VALIDATION_FAILED naming the field for %s, changing nothing', async (_label, body, fields) => {
    const owner = await createUser();
    const before = await organizationRow(owner.organizationId);
    expectError(await patch(owner, owner.organizationId, body), 400, 'VALIDATION_FAILED', fields);
    expect(await organizationRow(owner.organizationId)).toEqual(before);
  });

  it('answers 403 NOT_A_MEMBER for an id that is not a uuid, as for an unknown one', async () => {
    const owner = await createUser();
    expectError(await patch(owner, 'not-a-uuid', { city: 'Rome' }), 403, 'NOT_A_MEMBER');
  });

  it('answers 400 MALFORMED_JSON for a body that is not JSON', async () => {
    const owner = await createUser();
    const result = await invoke(routes.updateOrganization, {
      token: owner.accessToken,
      path: { orgId: owner.organizationId },
      rawBody: '{"city":',
    });
    expectError(result, 400, 'MALFORMED_JSON');
  });
});

describeSecurity(updateOrganization, {
  request: ({ organizationId }) => ({ path: { orgId: organizationId }, body: { city: `City ${randomUUID()}` } }),
  unchanged: async ({ organizationId }, request) =>
    expect((await organizationRow(organizationId)).city).not.toBe(request.body?.city),
});

describe('PATCH /organization/{orgId} security', () => {
  it('answers 403 NOT_A_MEMBER to a member (even the owner) of another organization, changing nothing', async () => {
    const owner = await createUser({ organizationName: 'Guarded Firm' });
    const stranger = await createUser();
    const result = await patch(stranger, owner.organizationId, { name: 'Hijacked' });
    expectError(result, 403, 'NOT_A_MEMBER');
    expect(result.body.data).toBeUndefined();
    expect((await organizationRow(owner.organizationId)).name).toBe('Guarded Firm');
    expectError(await patch(stranger, UNKNOWN_ID, { city: 'Nowhere' }), 403, 'NOT_A_MEMBER');
  });

  it('saves the change for an automation token with organization:write', async () => {
    const owner = await createUser();
    const writer = expectData(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: ['organization:write'] } }),
    );
    expectData(await patch({ accessToken: writer.token }, owner.organizationId, { city: 'Scoped' }), 201);
    expect((await organizationRow(owner.organizationId)).city).toBe('Scoped');
  });
});
