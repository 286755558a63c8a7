import { endpoint } from '../../lib/http/endpoint';
import { signImportParts } from '../../lib/material';
import { ImportPartLinksEntity, ImportPath, SignImportPartsDto } from '../../schemas/material/imports';
import * as routes from '../routes';

/** POST /cases/{caseId}/imports/{importId}/parts (extension): signed PUT links for the parts asked. */
export const handler = endpoint(
  routes.signImportParts,
  { path: ImportPath, body: SignImportPartsDto, response: ImportPartLinksEntity },
  ({ caseContext, path, body }) => signImportParts({ caseContext }, path.importId, body.partNumbers),
);
