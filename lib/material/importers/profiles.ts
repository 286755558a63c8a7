import { and, eq } from 'drizzle-orm';
import type { Executor } from '../../db/client';
import { materialProfiles } from '../../db/schema/material';

/** The profile whose export is imported; created on first import, reused after. */
export async function ensureProfile(
  tx: Executor,
  caseId: string,
  platform: 'professional_network' | 'chat_platform',
  name: string,
): Promise<string> {
  await tx.insert(materialProfiles).values({ caseId, platform, externalId: name, name }).onConflictDoNothing();
  const [profile] = await tx
    .select({ id: materialProfiles.id })
    .from(materialProfiles)
    .where(
      and(
        eq(materialProfiles.caseId, caseId),
        eq(materialProfiles.platform, platform),
        eq(materialProfiles.externalId, name),
      ),
    );
  return profile!.id;
}
