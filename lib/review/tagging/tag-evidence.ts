import type { TagEvidenceInput, TaggingItemKind } from '../../../schemas/review/tagging';
import { recordAudit } from '../../audit/record';
import { InvalidInputError } from '../../errors';
import type { Actor } from '../../auth/actor';
import type { CaseContext } from '../../cases/context';
import { transaction } from '../../db/transaction';
import { tagViewerOf } from '../tag-visibility';
import { applyTagging } from './apply-tagging';
import { countsOf, groupedChanges, tagDetails, taggingMetadata } from './audit';
import { checkItems, checkTags, itemsByKind } from './checks';
import { startTaggingJob, type TaggingJobAnswer } from './tagging-jobs';

export interface TaggingResult {
  items: number;
  added: number;
  removed: number;
}

/**
 * POST /cases/{caseId}/tagging (extension): with `items`, tags them now, all or nothing; with
 * `filter`, starts a background job (startTaggingJob). 202 either way (docs/decisions.md).
 */
export function tagEvidence(
  ctx: { caseContext: CaseContext; actor: Actor },
  input: TagEvidenceInput,
): Promise<TaggingResult | TaggingJobAnswer> {
  if (input.items === undefined && input.filter === undefined)
    throw new InvalidInputError([{ field: 'items', message: 'send items or filter' }]);
  if (input.items !== undefined && input.filter !== undefined)
    throw new InvalidInputError([{ field: 'filter', message: 'send items or filter, not both' }]);
  if (!input.add?.length && !input.remove?.length)
    throw new InvalidInputError([{ field: 'add', message: 'name at least one tag to add or remove' }]);
  if (input.filter)
    return startTaggingJob(ctx, { add: input.add ?? [], remove: input.remove ?? [], filter: input.filter });
  return tagItems(ctx, { add: input.add ?? [], remove: input.remove ?? [], items: input.items ?? [] });
}

/**
 * Adds and removes tags on up to 1,000 items in one transaction: every tag visible to the caller
 * (404) and active to add (409), every item in the case and visible to the caller's side (404),
 * then the links changed set-based and `evidence.tagged` recorded with them. A fixed number of
 * statements whatever the number of items.
 */
async function tagItems(
  ctx: { caseContext: CaseContext; actor: Actor },
  input: { add: string[]; remove: string[]; items: Array<{ kind: TaggingItemKind; id: string }> },
): Promise<TaggingResult> {
  const viewer = tagViewerOf(ctx.caseContext, ctx.actor.user.id);
  const byKind = itemsByKind(input.items);
  return transaction(async (tx) => {
    const checked = await checkTags(tx, viewer, input.add, input.remove);
    await checkItems(tx, viewer, byKind);
    const changes = await applyTagging(tx, {
      userId: viewer.userId,
      add: checked.add.map((t) => t.id),
      remove: checked.remove.map((t) => t.id),
      items: byKind,
    });
    const items = Object.values(byKind).reduce((sum, ids) => sum + ids.length, 0);
    const result = { items, ...countsOf(changes) };
    recordAudit(tx, {
      action: 'evidence.tagged',
      organizationId: viewer.organizationId,
      caseId: viewer.caseId,
      metadata: taggingMetadata(viewer.side, result, {
        ...tagDetails(checked),
        itemIds: byKind,
        changes: groupedChanges(changes),
      }),
    });
    return result;
  });
}
