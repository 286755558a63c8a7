import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createCaseRow, type TestUser } from '../harness/actors';
import { invokeAudited } from '../harness/audit';
import { grantCase } from '../harness/cases';
import { UNKNOWN_ID } from '../harness/ids';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { createTagAs, createTagRow, tagPeople, tagRow } from '../harness/tags';

const update = (user: TestUser, caseId: string, tagId: string, body: unknown) =>
  invoke(routes.updateCaseTag, { token: user.accessToken, path: { caseId, tagId }, body });

describe('PATCH /cases/{caseId}/tags/{tagId}', () => {
  it('renames and recolours a case tag, recording the fields changed with their earlier values', async () => {
    const p = await tagPeople();
    const tag = await createTagAs(p.owner, p.caseId, { name: 'Hot' });
    const { result, events } = await invokeAudited(routes.updateCaseTag, {
      token: p.colleague.accessToken,
      path: { caseId: p.caseId, tagId: tag.id },
      body: { name: ' Very Hot ', backgroundColor: '#00ff00', severity: 'info', type: 'user' },
    });
    const updated = expectData(result);
    expect(updated).toMatchObject({
      id: tag.id,
      name: 'Very Hot',
      nameLowercase: 'very hot',
      backgroundColor: '#00FF00',
      severity: 'info',
      type: 'case',
      caseId: p.caseId,
    });
    expect(await tagRow(tag.id)).toMatchObject({ name: 'Very Hot', nameLowercase: 'very hot', type: 'case' });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'review.tag.updated',
      caseId: p.caseId,
      targetType: 'tag',
      targetId: tag.id,
      metadata: {
        tagId: tag.id,
        name: 'Very Hot',
        type: 'case',
        side: 'org',
        fields: ['name', 'backgroundColor'],
        changes: { name: 'Very Hot', backgroundColor: '#00FF00' },
        previous: { name: 'Hot', backgroundColor: '#E5E7EB' },
      },
    });
  });

  it('answers the tag unchanged and records nothing when nothing differs', async () => {
    const p = await tagPeople();
    const tag = await createTagAs(p.owner, p.caseId, { name: 'Hot', severity: 'danger' });
    const { result, events } = await invokeAudited(routes.updateCaseTag, {
      token: p.owner.accessToken,
      path: { caseId: p.caseId, tagId: tag.id },
      body: { name: 'Hot', severity: 'danger' },
    });
    expect(expectData(result)).toEqual(tag);
    expect(events).toEqual([]);
  });

  it("changes the caller's own user tag, and a name's letter case alone", async () => {
    const p = await tagPeople();
    const mine = await createTagAs(p.colleague, p.caseId, { name: 'mine', type: 'user' });
    expect(expectData(await update(p.colleague, p.caseId, mine.id, { name: 'MINE' }))).toMatchObject({
      name: 'MINE',
      nameLowercase: 'mine',
    });
  });

  it('refuses a name an active tag of the scope has with 409, and allows one of another scope', async () => {
    const p = await tagPeople();
    await createTagAs(p.owner, p.caseId, { name: 'Hot' });
    const cold = await createTagAs(p.owner, p.caseId, { name: 'Cold' });
    const { result, events } = await invokeAudited(routes.updateCaseTag, {
      token: p.owner.accessToken,
      path: { caseId: p.caseId, tagId: cold.id },
      body: { name: 'HOT' },
    });
    expectError(result, 409, 'CONFLICT');
    expect(events).toEqual([]);
    expect((await tagRow(cold.id)).name).toBe('Cold');
    const theirs = await createTagAs(p.opposing, p.caseId, { name: 'Theirs' });
    expectData(await update(p.opposing, p.caseId, theirs.id, { name: 'hot' }));
  });

  it("answers 404 for a tag the caller may not see: another member's user tag, the other side's, another case's or organization's, unknown", async () => {
    const p = await tagPeople();
    const other = await tagPeople();
    const otherCase = await createCaseRow(p.organizationId);
    await grantCase(otherCase.id, p.owner.id);
    const colleagues = await createTagAs(p.colleague, p.caseId, { name: 'Colleague only', type: 'user' });
    const theirs = await createTagAs(p.opposing, p.caseId, { name: 'Theirs' });
    const firms = await createTagAs(p.owner, p.caseId, { name: 'Firm' });
    const elsewhere = await createTagAs(p.owner, otherCase.id, { name: 'Elsewhere' });
    const foreign = await createTagAs(other.owner, other.caseId, { name: 'Foreign' });
    const firmOrg = await createTagRow({
      organizationId: p.organizationId,
      type: 'organization',
      name: 'Org',
      side: 'org',
    });
    for (const [user, tagId] of [
      [p.owner, colleagues.id],
      [p.owner, theirs.id],
      [p.opposing, firms.id],
      [p.opposing, firmOrg.id],
      [p.owner, elsewhere.id],
      [p.owner, foreign.id],
      [p.owner, UNKNOWN_ID],
      [p.owner, 'not-an-id'],
    ] as const) {
      const result = await update(user, p.caseId, tagId, { name: 'Renamed' });
      expectError(result, 404, 'NOT_FOUND');
      expect(JSON.stringify(result.body)).not.toMatch(/Colleague only|Theirs|Firm|Elsewhere|Foreign/);
    }
    for (const tag of [colleagues, theirs, firms, elsewhere, foreign])
      expect((await tagRow(tag.id)).name).toBe(tag.name);
  });

  it('answers 403 for system tags (both sides) and organization tags, which it may not change', async () => {
    const p = await tagPeople();
    const system = await createTagRow({ organizationId: p.organizationId, type: 'system', name: 'System' });
    const org = await createTagRow({
      organizationId: p.organizationId,
      type: 'organization',
      name: 'Org',
      side: 'org',
    });
    expectError(await update(p.owner, p.caseId, system.id, { name: 'X' }), 403, 'FORBIDDEN');
    const refused = await update(p.opposing, p.caseId, system.id, { name: 'X' });
    expectError(refused, 403, 'FORBIDDEN');
    expect(refused.body.error.message).toBe('System tags are read-only');
    const orgRefused = await update(p.owner, p.caseId, org.id, { name: 'X' });
    expectError(orgRefused, 403, 'FORBIDDEN');
    expect(orgRefused.body.error.message).toMatch(/\/organization\/\{orgId\}\/tags/);
    expect((await tagRow(system.id)).name).toBe('System');
    expect((await tagRow(org.id)).name).toBe('Org');
  });

  it('answers 409 for a deleted (inactive) tag', async () => {
    const p = await tagPeople();
    const old = await createTagRow({
      organizationId: p.organizationId,
      caseId: p.caseId,
      type: 'case',
      name: 'Old',
      side: 'org',
      isActive: false,
    });
    expectError(await update(p.owner, p.caseId, old.id, { name: 'New' }), 409, 'CONFLICT');
    expect((await tagRow(old.id)).name).toBe('Old');
  });

  it('refuses a viewer with 403', async () => {
    const p = await tagPeople();
    const tag = await createTagAs(p.owner, p.caseId, { name: 'Hot' });
    expectError(await update(p.viewer, p.caseId, tag.id, { name: 'Cold' }), 403, 'INSUFFICIENT_ROLE');
    expect((await tagRow(tag.id)).name).toBe('Hot');
  });

  it("records opposing counsel's change without naming the tag", async () => {
    const p = await tagPeople();
    const tag = await createTagAs(p.opposing, p.caseId, { name: 'Smoking Gun', type: 'user' });
    const { result, events } = await invokeAudited(routes.updateCaseTag, {
      token: p.opposing.accessToken,
      path: { caseId: p.caseId, tagId: tag.id },
      body: { name: 'Loaded Gun' },
    });
    expectData(result);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'review.tag.updated',
      targetId: null,
      metadata: { type: 'user', side: 'opposing_council' },
    });
    expect(events[0]!.metadata).toEqual({
      type: 'user',
      side: 'opposing_council',
      keys: ['changes', 'fields', 'name', 'previous', 'side', 'tagId', 'type'],
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(JSON.stringify(events)).not.toMatch(/gun/i);
    expect(JSON.stringify(events)).not.toContain(tag.id);
  });

  it.each([
    [{ name: '' }, 'body.name'],
    [{ name: 'x'.repeat(101) }, 'body.name'],
    [{ backgroundColor: '#12345' }, 'body.backgroundColor'],
    [{ textColor: 'blue' }, 'body.textColor'],
    [{ severity: 'high' }, 'body.severity'],
  ])('answers 400 naming the field for %j', async (body, field) => {
    const p = await tagPeople();
    const tag = await createTagAs(p.owner, p.caseId, { name: 'Hot' });
    expectError(await update(p.owner, p.caseId, tag.id, body), 400, 'VALIDATION_FAILED', [field]);
  });
});

describeSecurity(routes.updateCaseTag, {
  request: async ({ caseId, organizationId, user }) => {
    const tag = await createTagRow({
      organizationId,
      caseId,
      type: 'case',
      name: 'Before',
      side: 'org',
      createdById: user.id,
    });
    return { path: { caseId, tagId: tag.id }, body: { name: 'After' } };
  },
  succeeds: true,
  everyToken: true,
  unchanged: async (_actor, request) => {
    expect((await tagRow(request.path!.tagId!)).name).toBe('Before');
  },
});
