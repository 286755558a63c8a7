import { endpoint } from '../../lib/http/endpoint';
import { getCustodyExport } from '../../lib/material';
import { CustodyExportEntity, CustodyExportPath } from '../../schemas/material/custody';
import * as routes from '../routes';

/** GET /cases/{caseId}/custody/exports/{exportId} (extension): status, progress, and links to the volumes once done. */
export const handler = endpoint(
  routes.getCustodyExport,
  { path: CustodyExportPath, response: CustodyExportEntity },
  ({ caseContext, path }) => getCustodyExport({ caseContext }, path.exportId),
);
