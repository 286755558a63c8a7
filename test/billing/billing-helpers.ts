import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { completeSandboxCheckout } from '../../lib/billing/payment-methods';
import type { PaymentProcessor } from '../../lib/billing/processor';
import { SandboxProcessor } from '../../lib/billing/processor/sandbox';
import type { Cadence, TierKey } from '../../lib/billing/tiers';
import { db } from '../../lib/db/client';
import { billingRows, caseAccess, cases, creditLedger, organizationMembers, organizations } from '../../lib/db/schema';
import type { RouteDefinition } from '../../lib/http/route';
import { ROLES_BY_RANK, type OrganizationRole, type RoleRule, roleSatisfies } from '../../lib/organizations/roles';
import { addMember, createCaseRow, createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke, type InvokeResult } from '../harness/invoke';

/**
 * Shared helpers of the billing route tests (kept beside them, not in test/harness): putting an
 * organization on a plan with or without a card, cases with access, billing rows written directly,
 * and the organization security suite every billing route runs.
 */

export const urls = {
  successUrl: 'https://app.example.test/billing/done',
  cancelUrl: 'https://app.example.test/billing/cancel',
};

/** A card the sandbox accepts, and one it declines (ends 0002). */
export const GOOD_CARD = '4242 4242 4242 4242';
export const DECLINED_CARD = '4000 0000 0000 0002';

/** The request options of `user` acting in `organizationId` (their own organization by default). */
export function as(user: TestUser, organizationId = user.organizationId): { token: string; organization: string } {
  return { token: user.accessToken, organization: organizationId };
}

/** A fresh access token for `user` (after the clock moved past the 15-minute token lifetime). */
export async function signIn(user: TestUser): Promise<TestUser> {
  const data = expectData(await invoke(routes.login, { body: { email: user.email, password: user.password } }));
  return { ...user, accessToken: data.accessToken, refreshToken: data.refreshToken };
}

/** The sandbox checkout session id of a set-up link. */
export function sessionIdOf(setupUrl: string): string {
  return new URL(setupUrl).pathname.split('/').at(-1)!;
}

/**
 * Selects a plan through the route as `user` (the owner by default), and with `card` saves a card
 * through the sandbox checkout, which collects the open base fee. Returns the selection answer.
 */
export async function putOnPlan(
  user: TestUser,
  tier: TierKey,
  options: { card?: boolean | string; cadence?: Cadence; organizationId?: string } = {},
) {
  const body = { tier, ...(options.cadence ? { cadence: options.cadence } : {}), ...urls };
  const selected = expectData(await invoke(routes.selectPlan, { ...as(user, options.organizationId), body }));
  if (options.card) {
    expect(selected.setupSessionUrl, 'a card set-up link').toEqual(expect.any(String));
    const card = typeof options.card === 'string' ? options.card : GOOD_CARD;
    expect(await completeSandboxCheckout(sessionIdOf(selected.setupSessionUrl), card)).toEqual({
      successUrl: urls.successUrl,
    });
  }
  return selected;
}

/**
 * The sandbox processor with some calls replaced (a failing, held back or recording one), for the
 * tests that need the processor to misbehave; install it with usePaymentProcessor.
 */
export function sandboxProcessorWith(overrides: Partial<Omit<PaymentProcessor, 'name'>>): PaymentProcessor {
  const sandbox = new SandboxProcessor();
  return {
    name: 'sandbox',
    createCustomer: (input) => sandbox.createCustomer(input),
    createSetupSession: (input) => sandbox.createSetupSession(input),
    chargeInvoice: (input) => sandbox.chargeInvoice(input),
    payInvoice: (id) => sandbox.payInvoice(id),
    voidInvoice: (id) => sandbox.voidInvoice(id),
    ...overrides,
  };
}

/** Saves a card the sandbox accepts through the checkout page of a set-up link (collects what is open). */
export async function completeCheckoutOf(setupUrl: string, card = GOOD_CARD): Promise<void> {
  expect(await completeSandboxCheckout(sessionIdOf(setupUrl), card)).toEqual({ successUrl: urls.successUrl });
}

/** Gives `userId` access to a case (a case_access row). */
export async function grantCase(
  caseId: string,
  userId: string,
  access: 'owner' | 'admin' | 'viewer' | 'opposing_counsel' = 'owner',
): Promise<void> {
  await db().insert(caseAccess).values({ caseId, userId, access });
}

/** A case of `organizationId` to which `user` holds `access`. */
export async function caseWithAccess(
  organizationId: string,
  user: TestUser,
  access: 'owner' | 'admin' | 'viewer' | 'opposing_counsel' = 'owner',
  name?: string,
) {
  const row = await createCaseRow(organizationId, name ? { name } : {});
  await grantCase(row.id, user.id, access);
  return row;
}

export async function organizationRow(organizationId: string) {
  const [row] = await db().select().from(organizations).where(eq(organizations.id, organizationId));
  return row!;
}

export async function caseRow(caseId: string) {
  const [row] = await db().select().from(cases).where(eq(cases.id, caseId));
  return row!;
}

export async function rowsOfOrganization(organizationId: string) {
  return db().select().from(billingRows).where(eq(billingRows.organizationId, organizationId));
}

export async function rowsOfCase(caseId: string) {
  return db().select().from(billingRows).where(eq(billingRows.caseId, caseId));
}

export async function ledgerOf(organizationId: string) {
  return db().select().from(creditLedger).where(eq(creditLedger.organizationId, organizationId));
}

export type RowStatus = (typeof billingRows.$inferInsert)['status'];

export interface SeedRow {
  caseId?: string | null;
  amountCents: number;
  status?: RowStatus;
  informational?: boolean;
  skuKey?: string;
  createdAt?: Date;
  invoiceId?: string | null;
  hostedInvoiceUrl?: string | null;
  description?: string;
}

/** Billing rows written directly (statuses no sandbox flow reaches: waived, voided, refunded...). */
export async function insertRows(organizationId: string, rows: SeedRow[]) {
  if (rows.length === 0) return [];
  return db()
    .insert(billingRows)
    .values(
      rows.map((row) => {
        const key = `seed:${randomBytes(8).toString('hex')}`;
        return {
          organizationId,
          caseId: row.caseId ?? null,
          skuKey: row.skuKey ?? (row.caseId ? 'case_pro_upgrade' : 'platform_base_fee_tier2_monthly'),
          description: row.description ?? `Seeded ${row.status ?? 'paid'} ${row.amountCents}`,
          quantity: 1,
          unitAmountCents: row.amountCents,
          amountCents: row.amountCents,
          status: row.status ?? 'paid',
          informational: row.informational ?? row.status === 'plan_included',
          invoiceId: row.invoiceId ?? null,
          hostedInvoiceUrl: row.hostedInvoiceUrl ?? null,
          idempotencyKey: `${key}:0`,
          chargeKey: key,
          ...(row.createdAt ? { createdAt: row.createdAt, updatedAt: row.createdAt } : {}),
        };
      }),
    )
    .returning();
}

/** `count` instants one second apart ending `endingAt` (oldest first), for rows in a known order. */
export function secondsApart(count: number, endingAt = new Date()): Date[] {
  return Array.from({ length: count }, (_, index) => new Date(endingAt.getTime() - (count - 1 - index) * 1000));
}

export interface SecurityContext {
  /** The organization's owner (who registered it). */
  owner: TestUser;
}

export interface OrganizationSecurityOptions<C extends SecurityContext> {
  route: RouteDefinition;
  /** An organization in which a valid call of its owner succeeds. */
  setup: () => Promise<C>;
  /**
   * Sends one otherwise valid call as `user` with `auth` (token and organization header may be
   * missing). Prepares what the call needs for that user (a fresh case with owner access, ...).
   */
  send: (context: C, user: TestUser, auth: { token?: string; organization?: string }) => Promise<InvokeResult>;
}

/**
 * The organization security suite of a billing route: no token 401, the organization header
 * missing or over 200 characters 400 naming headers.organization, one that is not a UUID 403
 * NOT_A_MEMBER (it names no organization), a user of another organization 403 NOT_A_MEMBER, and
 * every organization role let through or refused 403 by the route's rule.
 */
export function describeOrganizationSecurity<C extends SecurityContext>({
  route,
  setup,
  send,
}: OrganizationSecurityOptions<C>): void {
  const rule: RoleRule = route.organization!.role;
  const allowed = ROLES_BY_RANK.filter((role) => roleSatisfies(role, rule));
  const refused = ROLES_BY_RANK.filter((role) => !roleSatisfies(role, rule));

  describe(`${route.method} ${route.path}: security (${rule})`, () => {
    it('answers 401 UNAUTHENTICATED without a bearer token, and the owner passes with one', async () => {
      const context = await setup();
      expectError(
        await send(context, context.owner, { organization: context.owner.organizationId }),
        401,
        'UNAUTHENTICATED',
      );
      const result = await send(context, context.owner, as(context.owner));
      expect(result.status, JSON.stringify(result.body)).toBe(route.successStatus);
    });

    it('answers 400 VALIDATION_FAILED naming headers.organization when the header is missing or over 200 characters', async () => {
      const context = await setup();
      expectError(await send(context, context.owner, { token: context.owner.accessToken }), 400, 'VALIDATION_FAILED', [
        'headers.organization',
      ]);
      expectError(
        await send(context, context.owner, { token: context.owner.accessToken, organization: 'o'.repeat(201) }),
        400,
        'VALIDATION_FAILED',
        ['headers.organization'],
      );
    });

    it('answers 403 NOT_A_MEMBER when the header is not an id, as for an organization the caller is not in', async () => {
      const context = await setup();
      expectError(
        await send(context, context.owner, { token: context.owner.accessToken, organization: 'acme' }),
        403,
        'NOT_A_MEMBER',
      );
    });

    it('answers 403 NOT_A_MEMBER to the owner of another organization naming this one', async () => {
      const context = await setup();
      const outsider = await createUser();
      const result = await send(context, outsider, as(outsider, context.owner.organizationId));
      expectError(result, 403, 'NOT_A_MEMBER');
      expect(result.body.data).toBeUndefined();
    });

    it.each(allowed.filter((role) => role !== 'owner'))('lets a member with the %s role through', async (role) => {
      const context = await setup();
      const member = await addMember(context.owner.organizationId, role);
      const result = await send(context, member, as(member, context.owner.organizationId));
      expect(result.status, JSON.stringify(result.body)).toBe(route.successStatus);
    });

    it.each(refused)('answers 403 INSUFFICIENT_ROLE to a member with the %s role', async (role: OrganizationRole) => {
      const context = await setup();
      const member = await addMember(context.owner.organizationId, role);
      const result = await send(context, member, as(member, context.owner.organizationId));
      expectError(result, 403, 'INSUFFICIENT_ROLE');
      expect(result.body.data).toBeUndefined();
    });
  });
}

/** Makes a member row of `user` in `organizationId` (for users who belong to two organizations). */
export async function joinOrganization(organizationId: string, user: TestUser, role: OrganizationRole): Promise<void> {
  await db().insert(organizationMembers).values({ organizationId, userId: user.id, role });
}
