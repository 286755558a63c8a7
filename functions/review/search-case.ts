import { endpoint } from '../../lib/http/endpoint';
import { searchCase, tagViewerOf, toCaseSearch } from '../../lib/review';
import { CasePath } from '../../schemas/cases/cases';
import { CaseSearchPageEntity, CaseSearchQuery } from '../../schemas/review/search';
import * as routes from '../routes';

/** GET /cases/{caseId}/search: one ranked list of the case's evidence, with highlights and facets. */
export const handler = endpoint(
  routes.searchCase,
  { path: CasePath, query: CaseSearchQuery, response: CaseSearchPageEntity },
  ({ caseContext, actor, query }) => searchCase(tagViewerOf(caseContext, actor.user.id), toCaseSearch(query), query),
);
