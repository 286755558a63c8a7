import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { count, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { tags } from '../../lib/db/schema';
import { createCaseRow, type TestUser } from '../harness/actors';
import { invokeAudited } from '../harness/audit';
import { grantCase } from '../harness/cases';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { createTagAs, createTagRow, tagPeople, tagRow } from '../harness/tags';

const create = (user: TestUser, caseId: string, body: unknown) =>
  invoke(routes.createCaseTag, { token: user.accessToken, path: { caseId }, body });

const tagsOfCase = async (caseId: string) =>
  (await db().select({ n: count() }).from(tags).where(eq(tags.caseId, caseId)))[0]!.n;

describe('POST /cases/{caseId}/tags', () => {
  it('creates a case tag of the firm, trimmed, colours uppercased, and records it', async () => {
    const p = await tagPeople();
    const { result, events } = await invokeAudited(routes.createCaseTag, {
      token: p.owner.accessToken,
      path: { caseId: p.caseId },
      body: { name: '  Hot Docs ', backgroundColor: '#ff0000', textColor: '#FFFFFF', severity: 'danger' },
    });
    const tag = expectData(result, 201);
    expect(tag).toEqual({
      id: expect.any(String),
      name: 'Hot Docs',
      nameLowercase: 'hot docs',
      backgroundColor: '#FF0000',
      textColor: '#FFFFFF',
      type: 'case',
      severity: 'danger',
      origin: 'manual',
      creatorAccessType: 'org',
      isActive: true,
      caseId: p.caseId,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(await tagRow(tag.id)).toMatchObject({ createdById: p.owner.id, organizationId: p.organizationId });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'review.tag.created',
      organizationId: p.organizationId,
      caseId: p.caseId,
      targetType: 'tag',
      targetId: tag.id,
      actorUserId: p.owner.id,
      metadata: {
        tagId: tag.id,
        name: 'Hot Docs',
        type: 'case',
        side: 'org',
        backgroundColor: '#FF0000',
        textColor: '#FFFFFF',
        severity: 'danger',
      },
    });
  });

  it("creates the caller's own user tag with the defaults, a 100-character name, ignoring unknown fields", async () => {
    const p = await tagPeople();
    const name = 'u'.repeat(100);
    const tag = expectData(
      await create(p.colleague, p.caseId, {
        name,
        type: 'user',
        isActive: false,
        creatorAccessType: 'opposing_council',
      }),
      201,
    );
    expect(tag).toMatchObject({
      name,
      type: 'user',
      backgroundColor: '#E5E7EB',
      textColor: '#111827',
      severity: 'info',
      isActive: true,
      creatorAccessType: 'org',
    });
    expect((await tagRow(tag.id)).createdById).toBe(p.colleague.id);
  });

  it("makes opposing counsel's tag theirs, and its event names no tag: keys and a SHA-256", async () => {
    const p = await tagPeople();
    const { result, events } = await invokeAudited(routes.createCaseTag, {
      token: p.opposing.accessToken,
      path: { caseId: p.caseId },
      body: { name: 'Smoking Gun', severity: 'warning' },
    });
    const tag = expectData(result, 201);
    expect(tag).toMatchObject({ creatorAccessType: 'opposing_council', type: 'case' });
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event).toMatchObject({ action: 'review.tag.created', caseId: p.caseId, targetType: null, targetId: null });
    expect(JSON.stringify(event)).not.toMatch(/smoking gun/i);
    expect(JSON.stringify(event)).not.toContain(tag.id);
    const full = {
      tagId: tag.id,
      name: 'Smoking Gun',
      type: 'case',
      side: 'opposing_council',
      backgroundColor: '#E5E7EB',
      textColor: '#111827',
      severity: 'warning',
    };
    expect(event!.metadata).toEqual({
      type: 'case',
      side: 'opposing_council',
      keys: Object.keys(full).sort(),
      sha256: createHash('sha256').update(canonicalize(full)!).digest('hex'),
    });
  });

  it('refuses a name an active tag of the same scope has, in any letter case, with 409 and no event', async () => {
    const p = await tagPeople();
    await createTagAs(p.owner, p.caseId, { name: 'Hot' });
    const { result, events } = await invokeAudited(routes.createCaseTag, {
      token: p.colleague.accessToken,
      path: { caseId: p.caseId },
      body: { name: ' hOT ' },
    });
    expectError(result, 409, 'CONFLICT');
    expect(events).toEqual([]);
    await createTagAs(p.owner, p.caseId, { name: 'Mine', type: 'user' });
    expectError(await create(p.owner, p.caseId, { name: 'MINE', type: 'user' }), 409, 'CONFLICT');
    await createTagAs(p.opposing, p.caseId, { name: 'Theirs' });
    expectError(await create(p.opposing, p.caseId, { name: 'theirs' }), 409, 'CONFLICT');
    expect(await tagsOfCase(p.caseId)).toBe(3);
  });

  it("allows the same name on the other side, as another user's user tag, as a user tag, in another case and once deactivated", async () => {
    const p = await tagPeople();
    await createTagAs(p.owner, p.caseId, { name: 'Hot' });
    await createTagAs(p.owner, p.caseId, { name: 'Mine', type: 'user' });
    // Opposing counsel's names are their own: a 409 would tell them the firm's.
    await createTagAs(p.opposing, p.caseId, { name: 'HOT' });
    await createTagAs(p.opposing, p.caseId, { name: 'mine', type: 'user' });
    await createTagAs(p.colleague, p.caseId, { name: 'Mine', type: 'user' });
    await createTagAs(p.owner, p.caseId, { name: 'hot', type: 'user' });
    const otherCase = await createCaseRow(p.organizationId);
    await grantCase(otherCase.id, p.owner.id);
    await createTagAs(p.owner, otherCase.id, { name: 'Hot' });
    await createTagRow({
      organizationId: p.organizationId,
      caseId: p.caseId,
      type: 'case',
      name: 'Old',
      side: 'org',
      isActive: false,
    });
    await createTagAs(p.owner, p.caseId, { name: 'Old' });
    // An organization tag of the name is another scope too.
    await createTagRow({ organizationId: p.organizationId, type: 'organization', name: 'Firmwide', side: 'org' });
    await createTagAs(p.owner, p.caseId, { name: 'Firmwide' });
  });

  it('refuses a viewer with 403 and creates nothing', async () => {
    const p = await tagPeople();
    const { result, events } = await invokeAudited(routes.createCaseTag, {
      token: p.viewer.accessToken,
      path: { caseId: p.caseId },
      body: { name: 'Hot' },
    });
    expectError(result, 403, 'INSUFFICIENT_ROLE');
    expect(result.body.error.message).toBe('Viewers may read tags but not change them');
    expect(events).toEqual([]);
    expect(await tagsOfCase(p.caseId)).toBe(0);
  });

  it("refuses another organization's owner and a member without case access", async () => {
    const p = await tagPeople();
    const other = await tagPeople();
    expectError(await create(other.owner, p.caseId, { name: 'Hot' }), 403, 'INSUFFICIENT_ROLE');
    expectError(await create(p.admin, p.caseId, { name: 'Hot' }), 403, 'INSUFFICIENT_ROLE');
    expect(await tagsOfCase(p.caseId)).toBe(0);
  });

  it.each([
    [{}, 'body.name'],
    [{ name: '' }, 'body.name'],
    [{ name: '   ' }, 'body.name'],
    [{ name: 'x'.repeat(101) }, 'body.name'],
    [{ name: 42 }, 'body.name'],
    [{ name: 'A', type: 'organization' }, 'body.type'],
    [{ name: 'A', type: 'system' }, 'body.type'],
    [{ name: 'A', backgroundColor: 'red' }, 'body.backgroundColor'],
    [{ name: 'A', textColor: '#FFF' }, 'body.textColor'],
    [{ name: 'A', textColor: '#GGGGGG' }, 'body.textColor'],
    [{ name: 'A', severity: 'critical' }, 'body.severity'],
  ])('answers 400 naming the field for %j', async (body, field) => {
    const p = await tagPeople();
    expectError(await create(p.owner, p.caseId, body), 400, 'VALIDATION_FAILED', [field]);
    expect(await tagsOfCase(p.caseId)).toBe(0);
  });
});

let counter = 0;
describeSecurity(routes.createCaseTag, {
  request: ({ caseId }) => {
    counter += 1;
    return { path: { caseId }, body: { name: `Tag ${counter}` } };
  },
  succeeds: true,
  everyToken: true,
  unchanged: async ({ caseId }) => {
    if (caseId) expect(await tagsOfCase(caseId)).toBe(0);
  },
});
