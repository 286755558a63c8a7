import { endpoint } from '../../lib/http/endpoint';
import { getImport } from '../../lib/material';
import { ImportEntity, ImportPath } from '../../schemas/material/imports';
import * as routes from '../routes';

/** GET /cases/{caseId}/imports/{importId} (extension): status, progress and error of one import. */
export const handler = endpoint(
  routes.getImport,
  { path: ImportPath, response: ImportEntity },
  ({ organization, caseContext, path }) => getImport({ organization, caseContext }, path.importId),
);
