import { endpoint } from '../../lib/http/endpoint';
import { retryImport } from '../../lib/material';
import { ImportEntity, ImportPath } from '../../schemas/material/imports';
import * as routes from '../routes';

/** POST /cases/{caseId}/imports/{importId}/retry (extension): 202, a failed import queued to resume. */
export const handler = endpoint(
  routes.retryImport,
  { path: ImportPath, response: ImportEntity },
  ({ organization, caseContext, path }) => retryImport({ organization, caseContext }, path.importId),
);
