import { endpoint } from '../../lib/http/endpoint';
import { tagEvidence } from '../../lib/review';
import { CasePath } from '../../schemas/cases/cases';
import { TagEvidenceAnswer, TagEvidenceDto } from '../../schemas/review/tagging';
import * as routes from '../routes';

/** POST /cases/{caseId}/tagging (extension): 202, items tagged now (all or nothing), or a tagging job by filter queued. */
export const handler = endpoint(
  routes.tagEvidence,
  { path: CasePath, body: TagEvidenceDto, response: TagEvidenceAnswer },
  ({ caseContext, actor, body }) => tagEvidence({ caseContext, actor }, body),
);
