import { and, asc, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { runAdminCommand } from '../../lib/admin/cli';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { auditEvents, billingHistory, organizations, users } from '../../lib/db/schema';
import { LAPSED_UPLOAD_GRACE_SECONDS } from '../../lib/material/lapsed-uploads';
import { UPLOAD_LINK_SECONDS } from '../../lib/material/uploads';
import { as, ledgerOf, putOnPlan } from '../harness/billing';
import { caseWithAccess, caseWithOwner } from '../harness/cases';
import { createUser, uniqueEmail } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { forgeAuditRows } from '../harness/audit';

async function isSuperAdmin(id: string) {
  const [row] = await db().select({ isSuperAdmin: users.isSuperAdmin }).from(users).where(eq(users.id, id));
  return row!.isSuperAdmin;
}

describe('npm run admin -- super-admin', () => {
  it('grants and revokes super admin by email', async () => {
    const user = await createUser();
    const lines: string[] = [];
    expect(await runAdminCommand(['super-admin', 'grant', user.email.toUpperCase()], (l) => lines.push(l))).toBe(0);
    expect(await isSuperAdmin(user.id)).toBe(true);
    expect(await runAdminCommand(['super-admin', 'revoke', user.email], (l) => lines.push(l))).toBe(0);
    expect(await isSuperAdmin(user.id)).toBe(false);
    expect(lines).toEqual([expect.stringContaining('granted'), expect.stringContaining('revoked')]);
  });

  it('exits 1 for an unknown email and 2 with usage for a bad command', async () => {
    const lines: string[] = [];
    expect(await runAdminCommand(['super-admin', 'grant', uniqueEmail('nobody')], (l) => lines.push(l))).toBe(1);
    expect(await runAdminCommand(['super-admin', 'promote', 'x@example.com'], (l) => lines.push(l))).toBe(2);
    expect(lines[1]).toContain('Usage');
  });
});

describe('npm run admin -- credits grant', () => {
  it('keeps the reason out of what the customer sees: GET /billing/credits and GET /billing/history', async () => {
    const owner = await createUser();
    const lines: string[] = [];

    expect(
      await runAdminCommand(['credits', 'grant', owner.organizationId, '5000', 'goodwill', 'gesture'], (l) =>
        lines.push(l),
      ),
    ).toBe(0);
    expect(
      await runAdminCommand(['credits', 'grant', owner.organizationId, '-1000', 'goodwill', 'taken', 'back'], (l) =>
        lines.push(l),
      ),
    ).toBe(0);

    expect(lines).toEqual([
      `credits: balance of ${owner.organizationId} is now 5000 cents`,
      `credits: balance of ${owner.organizationId} is now 4000 cents`,
    ]);
    const credits = await invoke(routes.getCredits, as(owner));
    const history = await invoke(routes.listBillingHistory, as(owner));
    expect(expectData(credits).ledger.map((e: { description: string }) => e.description)).toEqual([
      'Credits removed by support',
      'Credits added by support',
    ]);
    expect(expectData(history)).toHaveLength(2);
    expect(JSON.stringify(credits.body)).not.toMatch(/goodwill|gesture/i);
    expect(JSON.stringify(history.body)).not.toMatch(/goodwill|gesture/i);
    // The reason stays where staff can read it: the history entry (hidden from customers).
    const entries = await db()
      .select()
      .from(billingHistory)
      .where(eq(billingHistory.organizationId, owner.organizationId));
    expect(entries.map((e) => e.reason).sort()).toEqual(['goodwill gesture', 'goodwill taken back']);
    // Written neutrally, not only shown so: the stored ledger entries never held the reason.
    expect((await ledgerOf(owner.organizationId)).map((e) => e.description).sort()).toEqual([
      'Credits added by support',
      'Credits removed by support',
    ]);
  });

  it('exits 1 for an unknown organization and 2 with usage without a reason', async () => {
    const lines: string[] = [];
    expect(
      await runAdminCommand(['credits', 'grant', '00000000-0000-7000-8000-000000000000', '100', 'x'], (l) =>
        lines.push(l),
      ),
    ).toBe(1);
    expect(
      await runAdminCommand(['credits', 'grant', '00000000-0000-7000-8000-000000000000', '100'], (l) => lines.push(l)),
    ).toBe(2);
    expect(lines[0]).toBe('No organization 00000000-0000-7000-8000-000000000000');
    expect(lines[1]).toContain('Usage');
  });
});

describe('npm run admin -- billing verify', () => {
  /** Credits granted through the CLI, the base fee paid by card, a Pro upgrade 10,000 from credits and 4,900 invoiced. */
  async function organizationWithCharges() {
    const owner = await createUser();
    await putOnPlan(owner, 'tier4', { card: true });
    expect(await runAdminCommand(['credits', 'grant', owner.organizationId, '10000', 'prepaid'], () => {})).toBe(0);
    const target = await caseWithAccess(owner.organizationId, owner);
    expectData(await invoke(routes.upgradeCaseToPro, { ...as(owner), path: { caseId: target.id } }));
    return owner;
  }

  it('prints one OK line and exits 0 when nothing differs, for one organization or all', async () => {
    const owner = await organizationWithCharges();
    const one: string[] = [];
    const all: string[] = [];

    expect(await runAdminCommand(['billing', 'verify', owner.organizationId], (l) => one.push(l))).toBe(0);
    expect(await runAdminCommand(['billing', 'verify'], (l) => all.push(l))).toBe(0);

    expect(one).toEqual(['billing verify: OK, 1 organization(s) checked, no difference']);
    expect(all).toEqual([expect.stringMatching(/^billing verify: OK, \d+ organization\(s\) checked, no difference$/)]);
  });

  it('prints each difference on its own line and exits 1', async () => {
    const owner = await organizationWithCharges();
    await db().update(organizations).set({ creditBalanceCents: 1 }).where(eq(organizations.id, owner.organizationId));
    const lines: string[] = [];

    expect(await runAdminCommand(['billing', 'verify', owner.organizationId], (l) => lines.push(l))).toBe(1);

    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^${owner.organizationId} credit_balance: expected 0, actual 1 \\(.+\\)$`)),
      'billing verify: 1 difference(s) in 1 of 1 organization(s)',
    ]);
  });

  it('exits 1 naming an unknown organization, and 2 with usage for extra arguments', async () => {
    const lines: string[] = [];
    expect(
      await runAdminCommand(['billing', 'verify', '00000000-0000-7000-8000-000000000000'], (l) => lines.push(l)),
    ).toBe(1);
    expect(await runAdminCommand(['billing', 'verify', 'not-an-id'], (l) => lines.push(l))).toBe(1);
    expect(
      await runAdminCommand(['billing', 'verify', '00000000-0000-7000-8000-000000000000', 'extra'], (l) =>
        lines.push(l),
      ),
    ).toBe(2);
    expect(lines.slice(0, 2)).toEqual([
      'No organization 00000000-0000-7000-8000-000000000000',
      'No organization not-an-id',
    ]);
    expect(lines[2]).toContain('Usage');
  });
});

describe('npm run admin -- audit verify', () => {
  /** An organization whose chain holds its registration and a case opened and renamed through the routes. */
  async function organizationWithEvents() {
    const owner = await createUser();
    const as = { token: owner.accessToken, organization: owner.organizationId };
    const created = expectData(await invoke(routes.createCase, { ...as, body: { name: 'Doe v. Roe' } }), 201);
    expectData(await invoke(routes.updateCase, { ...as, path: { caseId: created.id }, body: { name: 'Roe v. Doe' } }));
    const events = await db()
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.organizationId, owner.organizationId))
      .orderBy(asc(auditEvents.sequence));
    return { owner, events };
  }

  /** Runs `work` with one event's action rewritten behind the append-only trigger's back, then puts it back. */
  async function withForgedAction(event: { id: string; action: string }, work: () => Promise<void>) {
    const setAction = (action: string) =>
      forgeAuditRows(() => db().update(auditEvents).set({ action }).where(eq(auditEvents.id, event.id)));
    await setAction('case.deleted');
    try {
      await work();
    } finally {
      await setAction(event.action);
    }
  }

  it('prints one OK line per organization and exits 0, for one organization or all with events', async () => {
    const { owner, events } = await organizationWithEvents();
    const { owner: second } = await organizationWithEvents();
    const one: string[] = [];
    const all: string[] = [];

    expect(await runAdminCommand(['audit', 'verify', owner.organizationId], (l) => one.push(l))).toBe(0);
    expect(await runAdminCommand(['audit', 'verify'], (l) => all.push(l))).toBe(0);

    const head = events.at(-1)!;
    expect(one).toEqual([`${owner.organizationId} OK: ${events.length} event(s), head ${head.sequence} ${head.hash}`]);
    expect(all).toEqual(
      expect.arrayContaining([one[0], expect.stringMatching(new RegExp(`^${second.organizationId} OK: `))]),
    );
    for (const line of all) expect(line).toMatch(/^[0-9a-f-]{36} OK: \d+ event\(s\), head \d+ [0-9a-f]{64}$/);
  });

  it('exits 1 naming the first invalid sequence of a forged row, also among all organizations', async () => {
    const { owner, events } = await organizationWithEvents();
    const forged = events.find((e) => e.action === 'case.updated')!;
    const one: string[] = [];
    const all: string[] = [];

    await withForgedAction(forged, async () => {
      expect(await runAdminCommand(['audit', 'verify', owner.organizationId], (l) => one.push(l))).toBe(1);
      expect(await runAdminCommand(['audit', 'verify'], (l) => all.push(l))).toBe(1);
    });

    const broken = `${owner.organizationId} BROKEN at sequence ${forged.sequence}: ${forged.sequence} event(s) checked, head ${events.length} ${events.at(-1)!.hash}`;
    expect(one).toEqual([broken]);
    expect(all).toContain(broken);
    expect(all.filter((line) => line.includes('BROKEN'))).toEqual([broken]);
    // Put back, the chain verifies again.
    expect(await runAdminCommand(['audit', 'verify', owner.organizationId], () => {})).toBe(0);
  });

  it('exits 1 naming an organization without events, and 2 with usage for extra arguments', async () => {
    const lines: string[] = [];
    expect(
      await runAdminCommand(['audit', 'verify', '00000000-0000-7000-8000-000000000000'], (l) => lines.push(l)),
    ).toBe(1);
    expect(await runAdminCommand(['audit', 'verify', 'not-an-id'], (l) => lines.push(l))).toBe(1);
    expect(await runAdminCommand(['audit', 'verify', 'a', 'b'], (l) => lines.push(l))).toBe(2);
    expect(lines.slice(0, 2)).toEqual([
      'No audit events for organization 00000000-0000-7000-8000-000000000000',
      'No audit events for organization not-an-id',
    ]);
    expect(lines[2]).toContain('Usage');
  });
});

describe('npm run admin -- maintenance run', () => {
  it('prints every count the run has: emails, customers, charges, invoices, imports, uploads, documents, Pro ended, audit events', async () => {
    // A lapsed upload: a link issued, never used, past its expiry and the grace after it.
    const s = await caseWithOwner();
    expectData(
      await invoke(routes.createAttachmentUploads, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        query: { caseId: s.caseId },
        body: { files: [{ name: 'never.bin', contentType: 'application/octet-stream', size: 10 }] },
      }),
    );
    testClock.advance(UPLOAD_LINK_SECONDS + LAPSED_UPLOAD_GRACE_SECONDS + 1);
    const lines: string[] = [];

    expect(await runAdminCommand(['maintenance', 'run'], (l) => lines.push(l))).toBe(0);

    expect(lines).toEqual([
      expect.stringMatching(
        /^maintenance done: \d+ email\(s\) sent, \d+ processor customer\(s\) created, \d+ charge\(s\) retried, \d+ invoice\(s\) voided, \d+ import\(s\) requeued, \d+ custody export\(s\) requeued, \d+ tagging job\(s\) requeued, \d+ import\(s\) waiting near the staging expiry, [1-9]\d* lapsed upload\(s\) removed, \d+ generated document\(s\) removed, \d+ stored large answer\(s\) removed, \d+ case\(s\) no longer Pro through their plan, \d+ audit event\(s\) re-verified$/,
      ),
    ]);
  });
});

describe('npm run admin: commands act as staff in the audit trail', () => {
  it('records what a command changes as staff, naming no one, with a request id of its own per command', async () => {
    const owner = await createUser();
    expect(await runAdminCommand(['credits', 'grant', owner.organizationId, '700', 'goodwill'], () => {})).toBe(0);
    expect(await runAdminCommand(['credits', 'grant', owner.organizationId, '-200', 'undo'], () => {})).toBe(0);

    const granted = await db()
      .select()
      .from(auditEvents)
      .where(
        and(eq(auditEvents.organizationId, owner.organizationId), eq(auditEvents.action, 'billing.credits.granted')),
      )
      .orderBy(asc(auditEvents.sequence));
    expect(granted).toHaveLength(2);
    for (const event of granted) {
      expect(event).toMatchObject({ actorType: 'staff', actorUserId: null, tokenId: null, ip: null, userAgent: null });
      expect(event.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    expect(granted[0]!.requestId).not.toBe(granted[1]!.requestId);
    // The reason stays in the staff-only billing history, never in the trail customers read.
    expect(JSON.stringify(granted)).not.toMatch(/goodwill|undo/);
  });
});
