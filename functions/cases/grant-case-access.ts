import { grantCaseAccess } from '../../lib/cases';
import { endpoint } from '../../lib/http/endpoint';
import { CaseAccessEntity, CaseAccessPath, GrantCaseAccessDto } from '../../schemas/cases/cases';
import * as routes from '../routes';

/** PUT /cases/{caseId}/access/{userId} (extension): owner, admin, viewer or opposing counsel. */
export const handler = endpoint(
  routes.grantCaseAccess,
  { path: CaseAccessPath, body: GrantCaseAccessDto, response: CaseAccessEntity },
  ({ organization, caseContext, path, body }) => grantCaseAccess({ organization, caseContext }, { ...path, ...body }),
);
