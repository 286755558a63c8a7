import { endpoint } from '../../lib/http/endpoint';
import { createImport } from '../../lib/material';
import { CasePath } from '../../schemas/cases/cases';
import { CreateImportDto, CreateImportResponseEntity } from '../../schemas/material/imports';
import * as routes from '../routes';

/** POST /cases/{caseId}/imports (extension): the import, awaiting its upload, and the signed PUT link for its file. */
export const handler = endpoint(
  routes.createImport,
  { path: CasePath, body: CreateImportDto, response: CreateImportResponseEntity },
  ({ organization, caseContext, actor, body }) => createImport({ organization, caseContext, actor }, body),
);
