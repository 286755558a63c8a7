import { endpoint } from '../../lib/http/endpoint';
import { startCustodyExport } from '../../lib/material';
import { CasePath } from '../../schemas/cases/cases';
import { CustodyExportEntity } from '../../schemas/material/custody';
import * as routes from '../routes';

/** POST /cases/{caseId}/custody/exports (extension): 202, the custody PDF export queued (or the one covering the same). */
export const handler = endpoint(
  routes.startCustodyExport,
  { path: CasePath, response: CustodyExportEntity },
  ({ caseContext, actor }) => startCustodyExport({ caseContext, actor }),
);
