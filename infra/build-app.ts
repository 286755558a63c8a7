import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { routeList } from '../functions/routes';
import type { RouteDefinition } from '../lib/http/route';
import { REPOSITORY_ROOT } from './bundling';
import { environments, isEnvironmentName, PLACEHOLDER_ACCOUNTS } from './environments';
import { CaseEvidenceStack } from './stack';

/** The context (feature flags, default environment) of cdk.json, so tests synthesize what the CLI does. */
export function cdkJsonContext(): Record<string, unknown> {
  return (
    (JSON.parse(readFileSync(join(REPOSITORY_ROOT, 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> })
      .context ?? {}
  );
}

export interface BuildAppOptions extends AppProps {
  /** Environments to put in the app; default: the `environment` context (cdk.json: dev). */
  environmentNames?: string[];
  /** Run cdk-nag (AwsSolutions) as a validation plugin during synth (default true). */
  nag?: boolean;
}

/**
 * The CDK app: one CaseEvidence-<environment> stack, in the environment's pinned account (a
 * different `-c account=...` or CLI credentials' account is refused: see pinnedAccount). Region:
 * `-c region=...` or the environment's. `-c deploy=true` (npm run deploy) also refuses
 * placeholder accounts.
 */
export function buildApp(options: BuildAppOptions = {}): { app: App; stacks: CaseEvidenceStack[] } {
  const { environmentNames, nag = true, ...appProps } = options;
  const app = new App(appProps);
  const names = environmentNames ?? [String(app.node.tryGetContext('environment') ?? 'dev')];
  const targets = names.map((name) => {
    if (!isEnvironmentName(name)) throw new Error(`Unknown environment "${name}": use dev, staging or prod`);
    const settings = environments[name];
    const account = pinnedAccount(name, settings.account, {
      context: app.node.tryGetContext('account') as string | undefined,
      credentials: process.env.CDK_DEFAULT_ACCOUNT,
      deploying: String(app.node.tryGetContext('deploy')) === 'true',
    });
    const region = String(app.node.tryGetContext('region') ?? settings.region);
    // The VPC's AZs are pinned per environment; recording them as the AZ lookup's answer keeps
    // synth from calling AWS (offline, no credentials) and keeps templates stable.
    const azKey = `availability-zones:account=${account}:region=${region}`;
    if (app.node.tryGetContext(azKey) === undefined)
      app.node.setContext(azKey, settings.availabilityZones ?? [`${region}a`, `${region}b`]);
    return { name, settings, account, region };
  });
  // `-c routes=login,register`: only these routes (quick synth checks); default every route.
  const only = app.node.tryGetContext('routes') as string | undefined;
  const routes = only ? selectRoutes(String(only).split(',')) : routeList;
  const stacks = targets.map(({ name, settings, account, region }) => {
    return new CaseEvidenceStack(app, `CaseEvidence-${name}`, {
      settings,
      routes,
      env: { account, region },
      description: `Case Evidence and Billing Service (${name})`,
    });
  });
  if (nag) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stacks };
}

/**
 * The account a stack is synthesized for: always the environment's own. Another account given
 * with `-c account=` or held by the CLI's credentials is an error, not an override, so a
 * deployment can only go where environments.ts says. A deployment also needs a real id.
 */
export function pinnedAccount(
  environment: string,
  pinned: string,
  given: { context?: string | undefined; credentials?: string | undefined; deploying?: boolean },
): string {
  for (const [source, account] of [
    ['-c account', given.context],
    ['the AWS credentials', given.credentials],
  ] as const) {
    if (account !== undefined && String(account) !== pinned)
      throw new Error(
        `Environment ${environment} is pinned to account ${pinned} (infra/environments.ts); ${source} is account ${account}`,
      );
  }
  if (given.deploying && PLACEHOLDER_ACCOUNTS.includes(pinned))
    throw new Error(
      `Environment ${environment} still has the placeholder account ${pinned}: set its real account (and domains) in infra/environments.ts`,
    );
  return pinned;
}

function selectRoutes(operationIds: string[]): RouteDefinition[] {
  return operationIds.map((id) => {
    const route = routeList.find((candidate) => candidate.operationId === id.trim());
    if (!route) throw new Error(`-c routes: no route with operationId "${id}"`);
    return route;
  });
}
