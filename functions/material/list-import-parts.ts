import { endpoint } from '../../lib/http/endpoint';
import { listImportParts } from '../../lib/material';
import { ImportPartsEntity, ImportPath } from '../../schemas/material/imports';
import * as routes from '../routes';

/** GET /cases/{caseId}/imports/{importId}/parts (extension): the parts of the upload that arrived. */
export const handler = endpoint(
  routes.listImportParts,
  { path: ImportPath, response: ImportPartsEntity },
  ({ caseContext, path }) => listImportParts({ caseContext }, path.importId),
);
