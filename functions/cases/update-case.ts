import { updateCase } from '../../lib/cases';
import { endpoint } from '../../lib/http/endpoint';
import { CaseEntity, CasePath, UpdateCaseDto } from '../../schemas/cases/cases';
import * as routes from '../routes';

/** PATCH /cases/{caseId} (extension): rename, archive or restore. */
export const handler = endpoint(
  routes.updateCase,
  { path: CasePath, body: UpdateCaseDto, response: CaseEntity },
  ({ caseContext, body }) => updateCase({ caseContext }, body),
);
