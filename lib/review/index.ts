export * from './tags';
/** Review: tags on evidence, tagging, and the case search. */
export { type TagSide, type TagViewer, reviewSide, tagViewerOf, visibleTag } from './tag-visibility';
export { toTagEntity } from './tag-entity';

// Review: case search
export {
  type CaseSearch,
  type CaseSearchInput,
  CaseSearchQueryError,
  SEARCH_KINDS,
  type SearchKind,
  type SearchViewer,
  searchCase,
  searchMatchSql,
  searchTaggableItemsSql,
  toCaseSearch,
} from './search';

// Review (extension): tagging evidence
export {
  drainTaggingJobs,
  enqueueTaggingJob,
  getTaggingJob,
  requeueStalledTaggingJobs,
  runTaggingJob,
  tagEvidence,
} from './tagging';
