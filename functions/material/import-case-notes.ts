import { endpoint } from '../../lib/http/endpoint';
import { importNotes } from '../../lib/material/notes';
import { ImportCaseNotesDto, ImportNotesQuery, ImportNotesResponseEntity } from '../../schemas/material/material';
import { routes } from '../routes';

/** POST /extraction/case/import-notes?caseId= (internal): device registration and notes, idempotent per note id. */
export const handler = endpoint(
  routes.importCaseNotes,
  { query: ImportNotesQuery, body: ImportCaseNotesDto, response: ImportNotesResponseEntity },
  ({ organization, actor, query, body }) => importNotes(organization, actor, query.caseId, body),
);
