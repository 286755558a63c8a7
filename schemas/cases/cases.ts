import * as z from 'zod/mini';
import { CASE_ACCESS_LEVELS } from '../../lib/cases/rules';
import { DateTime, DisplayName, Id, IdText, QueryBoolean } from '../common/fields';
import { PageEntity, PagingQuery } from '../common/paging';

export const CaseAccessEnum = z.enum(CASE_ACCESS_LEVELS);

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

export const CreateCaseDto = z.object({ name: DisplayName }).register(z.globalRegistry, { id: 'CreateCaseDto' });

export const UpdateCaseDto = z
  .object({ name: z.optional(DisplayName), archived: z.optional(z.boolean()) })
  .register(z.globalRegistry, { id: 'UpdateCaseDto' });

export const ListCasesQuery = z.object({ ...PagingQuery, includeArchived: z.optional(QueryBoolean) });

/** The path of every route on one case (its case rule reads `caseId`). */
export const CasePath = z.object({ caseId: IdText });
export const CaseAccessPath = z.object({ caseId: IdText, userId: IdText });

export const GrantCaseAccessDto = z
  .object({ access: CaseAccessEnum })
  .register(z.globalRegistry, { id: 'GrantCaseAccessDto' });

export const CaseAccessEntity = z
  .object({ caseId: Id, userId: Id, access: CaseAccessEnum })
  .register(z.globalRegistry, { id: 'CaseAccessEntity' });
