import { endpoint } from '../../lib/http/endpoint';
import { createAttachmentUploads } from '../../lib/material';
import {
  AttachmentUploadsResponseEntity,
  CreateAttachmentUploadsDto,
  ImportNotesQuery,
} from '../../schemas/material/material';
import * as routes from '../routes';

/** POST /extraction/case/attachment-uploads?caseId= (internal, extension): where the desktop extractor uploads note attachments. */
export const handler = endpoint(
  routes.createAttachmentUploads,
  { query: ImportNotesQuery, body: CreateAttachmentUploadsDto, response: AttachmentUploadsResponseEntity },
  ({ organization, caseContext, body }) => createAttachmentUploads({ organization, caseContext }, body),
);
