import { describe, expect, it } from 'vitest';
import { routeList } from '../../functions/routes';
import {
  ACCOUNT_CONCURRENCY,
  CONNECTIONS_PER_PROCESS,
  concurrencyBudget,
  DEFAULT_MAX_CONNECTIONS,
  loadOutcome,
  MIN_UNRESERVED_CONCURRENCY,
  PROXY_BORROW_TIMEOUT_SECONDS,
  PROXY_MAX_CONNECTIONS_PERCENT,
} from '../../infra/concurrency-budget';
import { type EnvironmentName, environments } from '../../infra/environments';
import { type SynthesizedResource, synthesizeForThisFile } from './synth';

/**
 * The concurrency budget (infra/concurrency-budget.ts, infra/README.md "Concurrency budget"): the
 * numbers the stack deploys are the budget's, and the budget holds for every environment with the
 * whole route table.
 */

const ENVIRONMENTS: EnvironmentName[] = ['dev', 'prod'];
const synth = synthesizeForThisFile(ENVIRONMENTS, ['login', 'getProfile']);
const ALL: EnvironmentName[] = ['dev', 'staging', 'prod'];
const budgetOf = (environment: EnvironmentName) => concurrencyBudget(environments[environment], routeList);
/** PostgreSQL keeps 3 slots for superusers and RDS 2 more for its own: the proxy must leave them. */
const RESERVED_SLOTS = 5;
/** Requests every environment runs at once with no wait, whatever the background work holds. */
const MIN_REQUESTS_SERVED_AT_ONCE = 30;

describe.each(ENVIRONMENTS)('the %s stack deploys the budget', (environment) => {
  const budget = () => synth.stacks[environment].concurrencyBudget;

  it("sets the proxy's MaxConnectionsPercent and borrow timeout from it", () => {
    const [[, targetGroup]] = synth.resourcesOf(environment, 'AWS::RDS::DBProxyTargetGroup') as [
      [string, SynthesizedResource],
    ];
    expect(targetGroup.Properties.ConnectionPoolConfigurationInfo).toMatchObject({
      MaxConnectionsPercent: PROXY_MAX_CONNECTIONS_PERCENT,
      ConnectionBorrowTimeout: PROXY_BORROW_TIMEOUT_SECONDS,
    });
    const [[, instance]] = synth.resourcesOf(environment, 'AWS::RDS::DBInstance') as [[string, SynthesizedResource]];
    expect(instance.Properties.DBInstanceClass).toBe(`db.${budget().instanceType}`);
  });

  it('gives every function the pool size the budget counts, and reserves only what it counts', () => {
    const functions = synth.resourcesOf(environment, 'AWS::Lambda::Function');
    // The migration step opens its one connection itself (max 1, counted as such).
    const ours = functions.filter(
      ([, fn]) =>
        fn.Properties.Environment?.Variables?.DATABASE_HOST &&
        !fn.Properties.Environment.Variables.DATABASE_ADMIN_SECRET_ARN,
    );
    expect(ours.length).toBeGreaterThan(2);
    for (const [, fn] of ours)
      expect(fn.Properties.Environment.Variables.DB_POOL_MAX).toBe(String(CONNECTIONS_PER_PROCESS));
    const reserved = functions.reduce((sum, [, fn]) => sum + (fn.Properties.ReservedConcurrentExecutions ?? 0), 0);
    expect(reserved).toBe(budget().reservedConcurrency);
  });
});

describe.each(ALL)('the %s budget with the whole route table', (environment) => {
  const budget = budgetOf(environment);

  it("knows the instance class's max_connections and leaves PostgreSQL's reserved slots free", () => {
    expect(DEFAULT_MAX_CONNECTIONS[environments[environment].database.instanceType]).toBe(budget.maxConnections);
    expect(budget.proxyConnections).toBeLessThanOrEqual(budget.maxConnections - RESERVED_SLOTS);
  });

  it('keeps the background work (imports, maintenance, migration) from starving the routes', () => {
    expect(budget.backgroundConnections).toBeLessThan(budget.proxyConnections / 4);
    expect(budget.routeConnections).toBe(budget.proxyConnections - budget.backgroundConnections);
    expect(budget.requestsServedAtOnce * CONNECTIONS_PER_PROCESS).toBeLessThanOrEqual(budget.routeConnections);
    expect(budget.requestsServedAtOnce).toBeGreaterThanOrEqual(MIN_REQUESTS_SERVED_AT_ONCE);
  });

  it('sheds a request that waits for a connection with our 503 while its function still runs', () => {
    for (const route of budget.routes)
      expect(PROXY_BORROW_TIMEOUT_SECONDS + 1, route.operationId).toBeLessThan(route.timeoutSeconds);
  });

  it("reserves no more Lambda concurrency than the account allows, leaving Lambda's minimum unreserved", () => {
    expect(budget.reservedConcurrency).toBeLessThanOrEqual(ACCOUNT_CONCURRENCY - MIN_UNRESERVED_CONCURRENCY);
  });

  it('counts every route, each reaching at most its burst plus its rate over its timeout', () => {
    expect(budget.routes.map((r) => r.operationId)).toEqual(routeList.map((r) => r.operationId));
    for (const route of budget.routes) {
      expect(route.reachableConcurrency).toBeLessThanOrEqual(
        route.throttle.burst + Math.ceil(route.throttle.rate * route.timeoutSeconds),
      );
      expect(route.proxyClientConnections).toBe(route.reachableConcurrency * CONNECTIONS_PER_PROCESS);
    }
  });

  it('1,000 requests at once: the gateway, Lambda and the proxy each take what the budget says', () => {
    // All to one route: its burst gets in, the rest is 429 at the gateway.
    const one = loadOutcome(budget, 1_000, ['getProfile']);
    const profile = budget.routes.find((r) => r.operationId === 'getProfile')!;
    expect(one.throttledAtGateway).toBe(1_000 - profile.throttle.burst);
    expect(one.servedAtOnce + one.waitingForConnection).toBe(profile.throttle.burst);
    expect(one.servedAtOnce).toBeLessThanOrEqual(budget.routeConnections);
    // Spread over every route: nearly all get in; the proxy runs routeConnections, the rest wait.
    const spread = loadOutcome(
      budget,
      1_000,
      budget.routes.map((r) => r.operationId),
    );
    expect(spread.throttledByLambda).toBe(0);
    expect(spread.servedAtOnce).toBe(budget.routeConnections);
    expect(spread.throttledAtGateway + spread.servedAtOnce + spread.waitingForConnection).toBe(1_000);
  });
});
