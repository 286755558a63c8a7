import { deleteCase } from '../../lib/cases';
import { endpoint } from '../../lib/http/endpoint';
import { CasePath } from '../../schemas/cases/cases';
import { MessageEntity } from '../../schemas/common/fields';
import * as routes from '../routes';

/** DELETE /cases/{caseId} (extension): soft delete. */
export const handler = endpoint(routes.deleteCase, { path: CasePath, response: MessageEntity }, ({ caseContext }) =>
  deleteCase({ caseContext }),
);
