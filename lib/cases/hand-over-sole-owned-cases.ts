import { sql } from 'drizzle-orm';
import { now } from '../clock';
import type { Executor } from '../db/client';
import { rawRows } from '../db/raw-rows';
import { caseAccess, cases } from '../db/schema/cases';
import { organizationMembers } from '../db/schema/organizations';

/**
 * Gives owner access of every case of the organization whose only owner is `leaverId` to `heirId`
 * (an owner of the organization), or when null to its oldest owner other than the leaver. One
 * statement, whatever the number of cases; an existing lower access of the heir is raised. Returns
 * the grants made.
 */
export async function handOverSoleOwnedCases(
  tx: Executor,
  organizationId: string,
  leaverId: string,
  heirId: string | null,
): Promise<Array<{ caseId: string; heirId: string }>> {
  const at = sql.param(now(), caseAccess.createdAt);
  const heir = heirId
    ? sql`${heirId}::uuid`
    : sql`(select heir.user_id from ${organizationMembers} heir
            where heir.organization_id = ${organizationId} and heir.role = 'owner' and heir.user_id <> ${leaverId}
            order by heir.created_at, heir.user_id limit 1)`;
  return rawRows<{ caseId: string; heirId: string }>(
    tx,
    sql`
    insert into ${caseAccess} (case_id, user_id, access, created_at, updated_at)
    select sole.case_id, handover.heir_id, 'owner', ${at}, ${at}
    from ${caseAccess} sole
    join ${cases} on ${cases.id} = sole.case_id and ${cases.organizationId} = ${organizationId}
    cross join (select ${heir} as heir_id) handover
    where sole.user_id = ${leaverId} and sole.access = 'owner' and handover.heir_id is not null
      and not exists (select 1 from ${caseAccess} other where other.case_id = sole.case_id and other.access = 'owner' and other.user_id <> ${leaverId})
    on conflict (case_id, user_id) do update set access = 'owner', updated_at = excluded.updated_at
    returning case_id as "caseId", user_id as "heirId"`,
  );
}
