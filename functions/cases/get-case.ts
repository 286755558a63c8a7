import { getCase } from '../../lib/cases';
import { endpoint } from '../../lib/http/endpoint';
import { CaseEntity, CasePath } from '../../schemas/cases/cases';
import * as routes from '../routes';

/** GET /cases/{caseId} (extension) */
export const handler = endpoint(routes.getCase, { path: CasePath, response: CaseEntity }, ({ caseContext }) =>
  getCase({ caseContext }),
);
