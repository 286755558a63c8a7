import { endpoint } from '../../lib/http/endpoint';
import { getTaggingJob } from '../../lib/review';
import { TaggingJobEntity, TaggingJobPath } from '../../schemas/review/tagging';
import * as routes from '../routes';

/** GET /cases/{caseId}/tagging/{jobId} (extension): a tagging job's status and progress. */
export const handler = endpoint(
  routes.getTaggingJob,
  { path: TaggingJobPath, response: TaggingJobEntity },
  ({ caseContext, actor, path }) => getTaggingJob({ caseContext, actor }, path.jobId),
);
