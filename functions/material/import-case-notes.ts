import { endpoint } from '../../lib/http/endpoint';
import { importCaseNotes } from '../../lib/material';
import { ImportCaseNotesDto, ImportNotesQuery, ImportNotesResponseEntity } from '../../schemas/material/material';
import * as routes from '../routes';

/** POST /extraction/case/import-notes?caseId= (internal): device registration and notes, idempotent per note id. */
export const handler = endpoint(
  routes.importCaseNotes,
  { query: ImportNotesQuery, body: ImportCaseNotesDto, response: ImportNotesResponseEntity },
  ({ actor, organization, caseContext, body }) => importCaseNotes({ actor, organization, caseContext }, body),
);
