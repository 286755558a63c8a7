import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { routeList } from '../functions/routes';
import type { RouteDefinition } from '../lib/http/route';
import { REPOSITORY_ROOT } from './bundling';
import { environments, isEnvironmentName } from './environments';
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
 * The CDK app: one CaseEvidence-<environment> stack. Account: `-c account=...`, else the
 * environment's pinned account, else the CLI credentials' account (CDK_DEFAULT_ACCOUNT), else a
 * placeholder that lets synth run offline. Region: `-c region=...` or the environment's.
 */
export function buildApp(options: BuildAppOptions = {}): { app: App; stacks: CaseEvidenceStack[] } {
  const { environmentNames, nag = true, ...appProps } = options;
  const app = new App(appProps);
  const names = environmentNames ?? [String(app.node.tryGetContext('environment') ?? 'dev')];
  const targets = names.map((name) => {
    if (!isEnvironmentName(name)) throw new Error(`Unknown environment "${name}": use dev, staging or prod`);
    const settings = environments[name];
    const account = String(
      app.node.tryGetContext('account') ?? settings.account ?? process.env.CDK_DEFAULT_ACCOUNT ?? '000000000000',
    );
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

function selectRoutes(operationIds: string[]): RouteDefinition[] {
  return operationIds.map((id) => {
    const route = routeList.find((candidate) => candidate.operationId === id.trim());
    if (!route) throw new Error(`-c routes: no route with operationId "${id}"`);
    return route;
  });
}
