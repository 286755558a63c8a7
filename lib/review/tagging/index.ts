export { applyTagging, type TaggingChange } from './apply-tagging';
export { caseEmailsWhere, emailFilterConditions, visiblyTagged } from './email-filter';
export * from './errors';
export { type ItemSelector, selectorOf } from './selectors';
export { tagEvidence, type TaggingResult } from './tag-evidence';
export {
  drainTaggingJobs,
  enqueueTaggingJob,
  getTaggingJob,
  requeueStalledTaggingJobs,
  runTaggingJob,
  TAGGING_BATCH_SIZE,
  type TaggingJobAnswer,
  type TaggingJobRunOutcome,
} from './tagging-jobs';
