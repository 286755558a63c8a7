import { endpoint } from '../../lib/http/endpoint';
import { createAttachmentUploads } from '../../lib/material/uploads';
import {
  AttachmentUploadsResponseEntity,
  CreateAttachmentUploadsDto,
  ImportNotesQuery,
} from '../../schemas/material/material';
import { routes } from '../routes';

/** POST /extraction/case/attachment-uploads?caseId= (internal, extension): where the desktop extractor uploads note attachments. */
export const handler = endpoint(
  routes.createAttachmentUploads,
  { query: ImportNotesQuery, body: CreateAttachmentUploadsDto, response: AttachmentUploadsResponseEntity },
  ({ organization, actor, query, body }) => createAttachmentUploads(organization, actor, query.caseId, body),
);
