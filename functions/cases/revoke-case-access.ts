import { revokeCaseAccess } from '../../lib/cases';
import { endpoint } from '../../lib/http/endpoint';
import { CaseAccessPath } from '../../schemas/cases/cases';
import { MessageEntity } from '../../schemas/common/fields';
import * as routes from '../routes';

/** DELETE /cases/{caseId}/access/{userId} (extension) */
export const handler = endpoint(
  routes.revokeCaseAccess,
  { path: CaseAccessPath, response: MessageEntity },
  ({ caseContext, path }) => revokeCaseAccess({ caseContext }, path),
);
