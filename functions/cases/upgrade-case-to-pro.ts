import { upgradeCaseToPro } from '../../lib/billing';
import { endpoint } from '../../lib/http/endpoint';
import { CaseIdPath, CaseProUpgradeResponseEntity } from '../../schemas/billing/billing';
import { routes } from '../routes';

/** POST /cases/{caseId}/pro-upgrade: one charge per case; 409 when already Pro. */
export const handler = endpoint(
  routes.upgradeCaseToPro,
  { path: CaseIdPath, response: CaseProUpgradeResponseEntity },
  ({ organization, actor, path }) => upgradeCaseToPro(organization.id, actor, path.caseId),
);
