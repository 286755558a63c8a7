// Review (extension): tagging evidence
export {
  drainTaggingJobs,
  enqueueTaggingJob,
  getTaggingJob,
  runTaggingJob,
  tagEvidence,
} from './tagging';
