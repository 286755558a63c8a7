/** The case search (GET /cases/{caseId}/search) and the matches a tagging by search tags. */
export { parseSearchQuery, searchTerms, type ParsedSearchQuery, type SearchTerm } from './parse-query';
export {
  type CaseSearch,
  type CaseSearchInput,
  CaseSearchQueryError,
  SEARCH_KINDS,
  type SearchKind,
  type SearchViewer,
  searchMatchSql,
  searchTaggableItemsSql,
  toCaseSearch,
} from './match';
export { searchCase, type CaseSearchPaging } from './search-case';
export { snippetOf } from './snippets';
