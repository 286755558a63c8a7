import { upgradeCaseToPro } from '../../lib/billing';
import { endpoint } from '../../lib/http/endpoint';
import { CaseProUpgradeResponseEntity } from '../../schemas/billing/billing';
import { CasePath } from '../../schemas/cases/cases';
import * as routes from '../routes';

/** POST /cases/{caseId}/pro-upgrade: one charge per case; 409 when already Pro. */
export const handler = endpoint(
  routes.upgradeCaseToPro,
  { path: CasePath, response: CaseProUpgradeResponseEntity },
  ({ organization, actor, caseContext }) => upgradeCaseToPro({ actor, organization, caseContext }),
);
