import { and, eq, gte, lt, sql } from 'drizzle-orm';
import { addDays, now } from '../clock';
import type { Executor } from '../db/client';
import { db } from '../db/client';
import { signInAddresses, users } from '../db/schema/users';
import { addressGroup } from '../rate-limit/address-group';

/** How long an address stays known after the last sign-in from it (then pruned by maintenance). */
export const KNOWN_ADDRESS_DAYS = 90;

/**
 * Stamps the client's address group as known to the user (a successful sign-in: login, register,
 * an invitation that signs in). Nothing without an address (a test, the CLI, an event without a
 * source IP).
 */
export async function recordSignInAddress(executor: Executor, userId: string, ip: string | null): Promise<void> {
  const group = addressGroup(ip);
  // No address to know: every request without one would share it.
  if (group === 'unknown') return;
  await executor
    .insert(signInAddresses)
    .values({ userId, addressGroup: group, lastSignedInAt: now() })
    .onConflictDoUpdate({
      target: [signInAddresses.userId, signInAddresses.addressGroup],
      set: { lastSignedInAt: sql`greatest(${signInAddresses.lastSignedInAt}, excluded.last_signed_in_at)` },
    });
}

/**
 * The account of a sign-in and whether the client's address group is known to it (signed in from
 * in the last KNOWN_ADDRESS_DAYS), in one statement whether or not the account exists, so the
 * answer time tells no more than before.
 */
export async function signInAccount(email: string, ip: string | null) {
  const [row] = await db()
    .select({ user: users, knownSince: signInAddresses.lastSignedInAt })
    .from(users)
    .leftJoin(
      signInAddresses,
      and(
        eq(signInAddresses.userId, users.id),
        eq(signInAddresses.addressGroup, ip ? addressGroup(ip) : ''),
        gte(signInAddresses.lastSignedInAt, addDays(now(), -KNOWN_ADDRESS_DAYS)),
      ),
    )
    .where(eq(users.email, email))
    .limit(1);
  return { user: row?.user, known: row?.knownSince != null };
}

/** Forgets addresses not signed in from for KNOWN_ADDRESS_DAYS (periodic maintenance). */
export async function pruneSignInAddresses(): Promise<void> {
  await db()
    .delete(signInAddresses)
    .where(lt(signInAddresses.lastSignedInAt, addDays(now(), -KNOWN_ADDRESS_DAYS)));
}
