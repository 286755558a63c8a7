import * as z from 'zod/mini';
import { DateTime, DisplayName, Id, QueryBoolean } from '../common/fields';
import { PageEntity, PagingQuery } from '../common/paging';

export const CaseAccessEnum = z.enum(['owner', 'admin', 'viewer', 'opposing_counsel']);

export const CaseEntity = z
  .object({
    id: Id,
    organizationId: Id,
    name: z.string(),
    isPro: z.boolean(),
    archivedAt: z.nullable(DateTime),
    deletedAt: z.nullable(DateTime),
    createdAt: DateTime,
    updatedAt: DateTime,
    access: z.nullable(CaseAccessEnum),
  })
  .register(z.globalRegistry, { id: 'CaseEntity' });

export const CasePageEntity = PageEntity(CaseEntity).register(z.globalRegistry, { id: 'CasePageEntity' });

export const CreateCaseDto = z.strictObject({ name: DisplayName }).register(z.globalRegistry, { id: 'CreateCaseDto' });

export const UpdateCaseDto = z
  .strictObject({ name: z.optional(DisplayName), archived: z.optional(z.boolean()) })
  .register(z.globalRegistry, { id: 'UpdateCaseDto' });

export const ListCasesQuery = z.object({ ...PagingQuery, includeArchived: z.optional(QueryBoolean) });

export const CasePath = z.object({ caseId: Id });
export const CaseAccessPath = z.object({ caseId: Id, userId: Id });

export const GrantCaseAccessDto = z.strictObject({ access: CaseAccessEnum }).register(z.globalRegistry, { id: 'GrantCaseAccessDto' });

export const CaseAccessEntity = z.object({ caseId: Id, userId: Id, access: CaseAccessEnum }).register(z.globalRegistry, { id: 'CaseAccessEntity' });
