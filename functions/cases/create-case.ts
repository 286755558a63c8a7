import { createCase } from '../../lib/cases';
import { endpoint } from '../../lib/http/endpoint';
import { CaseEntity, CreateCaseDto } from '../../schemas/cases/cases';
import * as routes from '../routes';

/** POST /cases (extension): a case in the header's organization; the creator gets owner access. */
export const handler = endpoint(
  routes.createCase,
  { body: CreateCaseDto, response: CaseEntity },
  ({ actor, organization, body }) => createCase({ actor, organization }, body),
);
