import { endpoint } from '../../lib/http/endpoint';
import { startImport } from '../../lib/material';
import { ImportEntity, ImportPath } from '../../schemas/material/imports';
import * as routes from '../routes';

/** POST /cases/{caseId}/imports/{importId}/start (extension): 202, the import queued for the worker. */
export const handler = endpoint(
  routes.startImport,
  { path: ImportPath, response: ImportEntity },
  ({ organization, caseContext, path }) => startImport({ organization, caseContext }, path.importId),
);
