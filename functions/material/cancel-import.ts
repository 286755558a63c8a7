import { endpoint } from '../../lib/http/endpoint';
import { cancelImport } from '../../lib/material';
import { ImportEntity, ImportPath } from '../../schemas/material/imports';
import * as routes from '../routes';

/** POST /cases/{caseId}/imports/{importId}/cancel (extension): 200, the import ended for good (what it imported stays). */
export const handler = endpoint(
  routes.cancelImport,
  { path: ImportPath, response: ImportEntity },
  ({ organization, caseContext, path }) => cancelImport({ organization, caseContext }, path.importId),
);
