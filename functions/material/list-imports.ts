import { endpoint } from '../../lib/http/endpoint';
import { listImports } from '../../lib/material';
import { CasePath } from '../../schemas/cases/cases';
import { ImportPageEntity, ListImportsQuery } from '../../schemas/material/imports';
import * as routes from '../routes';

/** GET /cases/{caseId}/imports (extension): the case's imports, newest first. */
export const handler = endpoint(
  routes.listImports,
  { path: CasePath, query: ListImportsQuery, response: ImportPageEntity },
  ({ organization, caseContext, query }) => listImports({ organization, caseContext }, query),
);
