import { inArray, sql } from 'drizzle-orm';
import { now } from '../clock';
import type { Executor } from '../db/client';
import { emailTokens, users } from '../db/schema/users';
import type { AfterCommit } from '../db/transaction';
import { forgetCachedProfile } from './profile';

/** A member's new name and/or login email (null: unchanged), as an organization's admin sets them. */
export interface MemberDetails {
  userId: string;
  name: string | null;
  email: string | null;
}

/**
 * Writes the names and login emails an organization's admin changed
 * (lib/organizations/update-organization-users.ts), in one statement whatever their number: a
 * changed email is unverified again, and the links emailed to the old address are voided (one more
 * statement) so they cannot act on the new one. Ending the sessions of a moved address is the
 * caller's.
 */
export async function updateMemberDetails(
  tx: Executor,
  afterCommit: AfterCommit,
  changes: MemberDetails[],
): Promise<void> {
  if (changes.length === 0) return;
  const values = sql.join(
    changes.map((change) => sql`(${change.userId}::uuid, ${change.name}::text, ${change.email}::text)`),
    sql`, `,
  );
  await tx.execute(sql`
    update ${users} set
      name = coalesce(changes.name, ${users.name}),
      email = coalesce(changes.email, ${users.email}),
      is_email_verified = case when changes.email is null then ${users.isEmailVerified} else false end,
      email_verified_at = case when changes.email is null then ${users.emailVerifiedAt} else null end,
      updated_at = ${sql.param(now(), users.updatedAt)}
    from (values ${values}) as changes(user_id, name, email)
    where ${users.id} = changes.user_id`);
  const moved = changes.filter((change) => change.email !== null).map((change) => change.userId);
  if (moved.length > 0) await tx.delete(emailTokens).where(inArray(emailTokens.userId, moved));
  afterCommit(async () => {
    for (const change of changes) forgetCachedProfile(change.userId);
  });
}
