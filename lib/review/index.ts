// Review (extension): tagging evidence
export {
  drainTaggingJobs,
  enqueueTaggingJob,
  getTaggingJob,
  requeueStalledTaggingJobs,
  runTaggingJob,
  tagEvidence,
} from './tagging';
