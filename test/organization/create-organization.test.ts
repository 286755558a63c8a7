import { randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { type PaymentProcessor, usePaymentProcessor } from '../../lib/billing/processor';
import { db } from '../../lib/db/client';
import {
  invitations,
  organizationMembers,
  organizationPlans,
  organizations,
  sandboxCustomers,
} from '../../lib/db/schema';
import { hashToken } from '../../lib/secrets';
import { runMaintenance } from '../../lib/maintenance';
import { createUser, emailsTo, type TestUser, tokenFromEmail, uniqueEmail } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

const INVITED = 'You are invited to join';

const create = (caller: { accessToken?: string }, body: unknown) =>
  invoke(routes.createOrganization, { token: caller.accessToken, body });

const uniqueName = (prefix = 'Firm') => `${prefix} ${randomBytes(4).toString('hex')}`;

/** Organizations whose name matches `name` case-insensitively. */
const organizationsNamed = (name: string) =>
  db()
    .select()
    .from(organizations)
    .where(eq(sql`lower(${organizations.name})`, name.toLowerCase()));

const organizationById = async (id: string) =>
  (await db().select().from(organizations).where(eq(organizations.id, id)))[0];

/** A processor that is down: every call fails, as when the payment processor cannot be reached. */
const unreachable = async (): Promise<never> => {
  throw new Error('payment processor unreachable');
};
const downProcessor: PaymentProcessor = {
  name: 'sandbox',
  createCustomer: unreachable,
  createSetupSession: unreachable,
  chargeInvoice: unreachable,
  payInvoice: unreachable,
  voidInvoice: unreachable,
};

afterEach(() => {
  usePaymentProcessor(undefined);
});

describe('POST /organization', () => {
  it('creates the organization with the caller as owner, on the free plan, with a processor customer', async () => {
    // Prepare
    const caller = await createUser();
    const name = uniqueName('Create Happy');
    // Act
    const result = await create(caller, { name: `  ${name}  ` });
    // Assess
    const data = expectData(result, 201);
    expect(data).toEqual({
      organization: expect.objectContaining({
        name,
        slug: name.toLowerCase().replace(/ /g, '-'),
        email: caller.email,
        isActive: true,
        activePlan: null,
        phone: [],
        metadata: {},
        version: 'v2',
      }),
      permission: { role: 'owner' },
      billing: {
        billingMode: 'free',
        onCaseBilling: false,
        tier: null,
        cadence: null,
        hasPaymentMethod: false,
        delinquent: false,
      },
      invitations: { sent: 0, notSent: 0 },
    });
    const orgId = data.organization.id as string;

    const members = await db().select().from(organizationMembers).where(eq(organizationMembers.organizationId, orgId));
    expect(members).toEqual([expect.objectContaining({ userId: caller.id, role: 'owner' })]);

    const [plan] = await db().select().from(organizationPlans).where(eq(organizationPlans.organizationId, orgId));
    expect(plan).toMatchObject({ type: 'free', seats: 5, devices: 2, storageBytes: 5 * 1024 ** 3, isActive: true });

    const row = await organizationById(orgId);
    expect(row!.processorCustomerId).toBe(`cus_sandbox_${orgId.replaceAll('-', '')}`);
    const customers = await db().select().from(sandboxCustomers).where(eq(sandboxCustomers.organizationId, orgId));
    expect(customers).toEqual([expect.objectContaining({ id: row!.processorCustomerId, name, email: caller.email })]);

    // The caller's profile lists it at once (the cached profile was dropped).
    const profile = expectData(await invoke(routes.getProfile, { token: caller.accessToken }));
    expect(profile.organizations).toContainEqual(
      expect.objectContaining({ organization: expect.objectContaining({ id: orgId }), permission: { role: 'owner' } }),
    );
    expect(profile.organizations).toHaveLength(2);
  });

  it('invites inviteEmails as members, skipping the caller and duplicates, and emails each invitee', async () => {
    // Prepare
    const caller = await createUser();
    const name = uniqueName('Create Invites');
    const first = uniqueEmail('first');
    const second = uniqueEmail('second');
    // Act
    const data = expectData(
      await create(caller, { name, inviteEmails: [first, second.toUpperCase(), first, caller.email.toUpperCase()] }),
      201,
    );
    // Assess
    expect(data.invitations).toEqual({ sent: 2, notSent: 0 });
    const orgId = data.organization.id as string;
    const rows = await db().select().from(invitations).where(eq(invitations.organizationId, orgId));
    expect(rows.map((r) => r.email).sort()).toEqual([first, second].sort());
    for (const row of rows) {
      expect(row).toMatchObject({ role: 'member', status: 'pending', invitedById: caller.id });
      expect(emailsTo(row.email)).toHaveLength(1);
      expect(emailsTo(row.email)[0]!.subject).toBe(`${INVITED} ${name}`);
      expect(row.tokenHash).toBe(hashToken(tokenFromEmail(row.email, INVITED)));
    }
    expect(emailsTo(caller.email).filter((m) => m.subject.startsWith(INVITED))).toHaveLength(0);
    const usage = expectData(await invoke(routes.getOrganizationUsage, { token: caller.accessToken, path: { orgId } }));
    expect(usage.seatsUsed).toBe(3);
  });

  it('gives a different name with the same slug its own slug', async () => {
    const caller = await createUser();
    const base = `Slug Clash ${randomBytes(3).toString('hex')}`;
    const first = expectData(await create(caller, { name: base }), 201);
    const second = expectData(await create(caller, { name: `${base}!` }), 201);
    expect(first.organization.slug).toBe(base.toLowerCase().replace(/ /g, '-'));
    expect(second.organization.slug).toMatch(new RegExp(`^${first.organization.slug}-[0-9a-f]{6}$`));
  });

  it('still creates the organization when the payment processor is down; maintenance creates the customer later', async () => {
    // Prepare
    const caller = await createUser();
    const name = uniqueName('Processor Down');
    usePaymentProcessor(downProcessor);
    // Act
    const data = expectData(await create(caller, { name }), 201);
    // Assess
    const orgId = data.organization.id as string;
    expect((await organizationById(orgId))!.processorCustomerId).toBeNull();
    expect(await db().select().from(sandboxCustomers).where(eq(sandboxCustomers.organizationId, orgId))).toHaveLength(
      0,
    );
    expect(
      await db().select().from(organizationMembers).where(eq(organizationMembers.organizationId, orgId)),
    ).toHaveLength(1);

    // Still down: maintenance leaves it for next time, without failing.
    await runMaintenance();
    expect((await organizationById(orgId))!.processorCustomerId).toBeNull();

    usePaymentProcessor(undefined);
    const { customersCreated } = await runMaintenance();
    expect(customersCreated).toBeGreaterThanOrEqual(1);
    const customerId = (await organizationById(orgId))!.processorCustomerId;
    expect(customerId).toBe(`cus_sandbox_${orgId.replaceAll('-', '')}`);
    expect(await db().select().from(sandboxCustomers).where(eq(sandboxCustomers.organizationId, orgId))).toEqual([
      expect.objectContaining({ id: customerId, name }),
    ]);
  });

  it.each([
    ['the same case', (name: string) => name],
    ['upper case', (name: string) => name.toUpperCase()],
    ['lower case with spaces around', (name: string) => `  ${name.toLowerCase()} `],
  ])('answers 400 ORGANIZATION_NAME_TAKEN for a taken name in %s, creating nothing', async (_label, variant) => {
    // Prepare
    const holder = await createUser();
    const name = uniqueName('Taken Name');
    expectData(await create(holder, { name }), 201);
    const caller = await createUser();
    const invitee = uniqueEmail('invitee');
    // Act
    const result = await create(caller, { name: variant(name), inviteEmails: [invitee] });
    // Assess
    expectError(result, 400, 'ORGANIZATION_NAME_TAKEN');
    expect(await organizationsNamed(name)).toHaveLength(1);
    expect(await db().select().from(organizationMembers).where(eq(organizationMembers.userId, caller.id))).toHaveLength(
      1,
    );
    expect(await db().select().from(invitations).where(eq(invitations.email, invitee))).toHaveLength(0);
    expect(emailsTo(invitee)).toHaveLength(0);
  });

  it('answers 400 for a name another user registered with', async () => {
    const name = uniqueName('Registered');
    await createUser({ organizationName: name });
    const caller = await createUser();
    expectError(await create(caller, { name: name.toLowerCase() }), 400, 'ORGANIZATION_NAME_TAKEN');
  });

  it('lets exactly one of two concurrent creates with the same name through', async () => {
    // Prepare
    const [alice, bob] = await Promise.all([createUser(), createUser()]);
    const name = uniqueName('Race');
    // Act
    const results = await Promise.all([create(alice, { name }), create(bob, { name: name.toUpperCase() })]);
    // Assess
    expect(results.map((r) => r.status).sort()).toEqual([201, 400]);
    expectError(results.find((r) => r.status === 400)!, 400, 'ORGANIZATION_NAME_TAKEN');
    const rows = await organizationsNamed(name);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.id).toBe(results.find((r) => r.status === 201)!.body.data.organization.id);
    const owners = await db()
      .select()
      .from(organizationMembers)
      .where(eq(organizationMembers.organizationId, rows[0]!.id));
    expect(owners).toHaveLength(1);
  });

  it('lets exactly one of many concurrent creates with the same name through', async () => {
    const callers = await Promise.all(Array.from({ length: 4 }, () => createUser()));
    const name = uniqueName('Crowd');
    const results = await Promise.all(callers.map((caller) => create(caller, { name })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const refused of results.filter((r) => r.status !== 201)) expectError(refused, 400, 'ORGANIZATION_NAME_TAKEN');
    expect(await organizationsNamed(name)).toHaveLength(1);
  });

  it("creates the organization with 50 inviteEmails: sends the first four (the free plan's free seats), not the rest, and says so", async () => {
    // Prepare
    const caller = await createUser();
    const name = uniqueName('Many Invites');
    const invitees = Array.from({ length: 50 }, () => uniqueEmail('seat'));
    // Act
    const data = expectData(await create(caller, { name, inviteEmails: invitees }), 201);
    // Assess
    expect(data.invitations).toEqual({ sent: 4, notSent: 46 });
    const rows = await db().select().from(invitations).where(eq(invitations.organizationId, data.organization.id));
    expect(rows.map((r) => r.email).sort()).toEqual(invitees.slice(0, 4).sort());
    for (const invitee of invitees.slice(0, 4)) expect(emailsTo(invitee)).toHaveLength(1);
    for (const invitee of invitees.slice(4)) expect(emailsTo(invitee)).toHaveLength(0);
    const usage = expectData(
      await invoke(routes.getOrganizationUsage, { token: caller.accessToken, path: { orgId: data.organization.id } }),
    );
    expect(usage).toMatchObject({ seats: 5, seatsUsed: 5, remainingSeats: 0 });
  });

  it.each([
    [{}, ['body.name']],
    [{ name: '' }, ['body.name']],
    [{ name: '   ' }, ['body.name']],
    [{ name: 'n'.repeat(101) }, ['body.name']],
    [{ name: 42 }, ['body.name']],
    [{ name: null }, ['body.name']],
    [{ name: 'Nul\u0000 LLP' }, ['body.name']],
    [{ name: 'Half \ud800 LLP' }, ['body.name']],
    [{ name: 'Fine Name', inviteEmails: 'a@example.com' }, ['body.inviteEmails']],
    [{ name: 'Fine Name', inviteEmails: ['not-an-email'] }, ['body.inviteEmails.0']],
    [{ name: 'Fine Name', inviteEmails: [7] }, ['body.inviteEmails.0']],
    [
      { name: 'Fine Name', inviteEmails: Array.from({ length: 51 }, (_v, i) => `bulk${i}@example.com`) },
      ['body.inviteEmails'],
    ],
  ])('answers 400 VALIDATION_FAILED naming the field for %j', async (body, fields) => {
    const caller = await createUser();
    expectError(await create(caller, body), 400, 'VALIDATION_FAILED', fields);
    expect(await db().select().from(organizationMembers).where(eq(organizationMembers.userId, caller.id))).toHaveLength(
      1,
    );
  });

  it('answers 400 MALFORMED_JSON for a body that is not JSON', async () => {
    const caller = await createUser();
    expectError(
      await invoke(routes.createOrganization, { token: caller.accessToken, rawBody: '{"name":' }),
      400,
      'MALFORMED_JSON',
    );
  });
});

describeSecurity(routes.createOrganization, {
  request: () => ({ body: { name: uniqueName('Secured') } }),
  unchanged: async (_actor, request) =>
    expect(await organizationsNamed((request.body as { name: string }).name)).toHaveLength(0),
});

describe('POST /organization security', () => {
  it('answers 401 before validating the body', async () => {
    expectError(await create({}, { name: 42 }), 401, 'UNAUTHENTICATED');
  });

  it('makes the caller of an automation token with organization:write the owner', async () => {
    const caller: TestUser = await createUser();
    const writer = expectData(
      await invoke(routes.generateToken, { token: caller.accessToken, body: { scopes: ['organization:write'] } }),
    );
    const accepted = uniqueName('Scoped');
    const data = expectData(await create({ accessToken: writer.token }, { name: accepted }), 201);
    const owner = await db()
      .select()
      .from(organizationMembers)
      .where(
        and(eq(organizationMembers.organizationId, data.organization.id), eq(organizationMembers.userId, caller.id)),
      );
    expect(owner).toEqual([expect.objectContaining({ role: 'owner' })]);
  });
});
