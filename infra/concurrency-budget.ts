import { functionTimeoutSeconds, type RouteDefinition } from '../lib/http/route';
import type { EnvironmentSettings } from './environments';

/**
 * The concurrency budget (infra/README.md, "Concurrency budget"): how many requests each route can
 * have in flight, how many database connections that asks of RDS Proxy, and what the proxy may
 * open. The stack reads its constants (the proxy's MaxConnectionsPercent and borrow timeout, the
 * pool size of every function); test/infra/concurrency-budget.test.ts keeps the numbers consistent.
 */

/** Connections of one function instance's postgres.js pool: one request at a time, plus one for after-commit work. */
export const CONNECTIONS_PER_PROCESS = 2;
/** RDS Proxy may open this share of the instance's max_connections (the rest: admin sessions, RDS's own). */
export const PROXY_MAX_CONNECTIONS_PERCENT = 90;
/**
 * How long the proxy lets a transaction wait for a pooled database connection when its pool is at
 * its cap (RDS default: 120 s, far beyond any function). Half the default function timeout (10 s):
 * a request that got no connection in 5 s fails (503 SERVICE_UNAVAILABLE, Retry-After) while its
 * function still has time to answer, instead of holding its concurrency until Lambda stops it; a
 * pool that busy is overloaded, and shedding load beats queueing behind it (the borrow-latency
 * alarm fires first, at 1 s).
 */
export const PROXY_BORROW_TIMEOUT_SECONDS = 5;
/** Lambda's default concurrency of an account and region (a quota; raise it, then this). */
export const ACCOUNT_CONCURRENCY = 1_000;
/** Lambda keeps at least this much of the account's concurrency unreserved. */
export const MIN_UNRESERVED_CONCURRENCY = 100;
/** Maintenance runs one at a time (scheduled every minute or more, asynchronously). */
const MAINTENANCE_CONCURRENCY = 1;
/** The migration step: one connection, during deployments. */
const MIGRATION_CONNECTIONS = 1;
/** The import worker's pool (infra/functions/import-worker.ts): the import and its progress. */
const IMPORT_WORKER_CONNECTIONS = 2;

/**
 * RDS for PostgreSQL's default max_connections, LEAST(DBInstanceClassMemory / 9531392, 5000), as
 * `show max_connections` reads on each class (DBInstanceClassMemory is the class's memory less what
 * RDS keeps). A class not listed here must be added before it is deployed (synth fails).
 */
export const DEFAULT_MAX_CONNECTIONS: Record<string, number> = {
  't4g.micro': 81,
  't4g.small': 189,
  't4g.medium': 410,
  't4g.large': 856,
  'm7g.large': 856,
  'r7g.large': 1_724,
};

export interface RouteBudget {
  operationId: string;
  throttle: { rate: number; burst: number };
  timeoutSeconds: number;
  reservedConcurrency: number | null;
  /**
   * The most requests in flight the gateway lets through: the burst at once, plus the steady rate
   * for as long as each may run (its timeout), capped by reserved concurrency or the account's.
   */
  reachableConcurrency: number;
  /** Client connections to the proxy those requests' functions may hold (reachable x CONNECTIONS_PER_PROCESS). */
  proxyClientConnections: number;
}

export interface ConcurrencyBudget {
  environment: string;
  instanceType: string;
  maxConnections: number;
  /** Database connections RDS Proxy may open: MaxConnectionsPercent of max_connections. */
  proxyConnections: number;
  /** What the functions that are not routes may hold at once: import workers, maintenance, migration. */
  backgroundConnections: number;
  /** The proxy's connections left for the routes' transactions. */
  routeConnections: number;
  /** Requests sure to run at once even if each holds both of its process's connections. */
  requestsServedAtOnce: number;
  borrowTimeoutSeconds: number;
  accountConcurrency: number;
  reservedConcurrency: number;
  routes: RouteBudget[];
  /** Sum over the routes: what the gateway could let in at worst, all routes at their limits together. */
  reachableConcurrency: number;
  proxyClientConnections: number;
}

/** The budget of one environment for the given routes (functions/routes.ts routeList for the stack). */
export function concurrencyBudget(
  settings: EnvironmentSettings,
  routes: readonly RouteDefinition[],
): ConcurrencyBudget {
  const maxConnections = DEFAULT_MAX_CONNECTIONS[settings.database.instanceType];
  if (maxConnections === undefined)
    throw new Error(
      `No max_connections known for ${settings.database.instanceType}: add it to DEFAULT_MAX_CONNECTIONS`,
    );
  const proxyConnections = Math.floor((maxConnections * PROXY_MAX_CONNECTIONS_PERCENT) / 100);
  const workers = settings.imports.workerConcurrency;
  const backgroundConnections =
    workers * IMPORT_WORKER_CONNECTIONS + MAINTENANCE_CONCURRENCY * CONNECTIONS_PER_PROCESS + MIGRATION_CONNECTIONS;
  const routeConnections = proxyConnections - backgroundConnections;
  const reserved = workers + routes.reduce((sum, route) => sum + (route.lambda?.reservedConcurrency ?? 0), 0);
  const budgets = routes.map((route): RouteBudget => {
    const timeoutSeconds = functionTimeoutSeconds(route);
    const reservedConcurrency = route.lambda?.reservedConcurrency ?? null;
    const byThrottle = route.throttle.burst + Math.ceil(route.throttle.rate * timeoutSeconds);
    const reachableConcurrency = Math.min(byThrottle, reservedConcurrency ?? ACCOUNT_CONCURRENCY - reserved);
    return {
      operationId: route.operationId,
      throttle: { ...route.throttle },
      timeoutSeconds,
      reservedConcurrency,
      reachableConcurrency,
      proxyClientConnections: reachableConcurrency * CONNECTIONS_PER_PROCESS,
    };
  });
  return {
    environment: settings.name,
    instanceType: settings.database.instanceType,
    maxConnections,
    proxyConnections,
    backgroundConnections,
    routeConnections,
    requestsServedAtOnce: Math.floor(routeConnections / CONNECTIONS_PER_PROCESS),
    borrowTimeoutSeconds: PROXY_BORROW_TIMEOUT_SECONDS,
    accountConcurrency: ACCOUNT_CONCURRENCY,
    reservedConcurrency: reserved,
    routes: budgets,
    reachableConcurrency: budgets.reduce((sum, r) => sum + r.reachableConcurrency, 0),
    proxyClientConnections: budgets.reduce((sum, r) => sum + r.proxyClientConnections, 0),
  };
}

export interface LoadOutcome {
  /** Answered 429 by the gateway: over the route's burst. */
  throttledAtGateway: number;
  /** Refused by Lambda: over the account's unreserved concurrency (the gateway answers its own 5xx). */
  throttledByLambda: number;
  /** Running their transactions at once. */
  servedAtOnce: number;
  /** Waiting in the proxy for a connection, up to the borrow timeout; each gets one as a transaction ends. */
  waitingForConnection: number;
}

/**
 * What `requests` requests arriving at once do, sent to `routes` evenly (one route: all to it):
 * each route lets in its burst (the token bucket is full at rest), Lambda runs what the account's
 * unreserved concurrency allows, and the proxy serves `routeConnections` transactions at once, the
 * others waiting for one. A request still waiting after the borrow timeout answers 503
 * SERVICE_UNAVAILABLE: that happens only when the waiting ones cannot all get a connection within
 * it, i.e. transactions longer than borrowTimeout x routeConnections / waiting on average.
 */
export function loadOutcome(budget: ConcurrencyBudget, requests: number, operationIds: readonly string[]): LoadOutcome {
  const routes = budget.routes.filter((route) => operationIds.includes(route.operationId));
  if (routes.length === 0) throw new Error('No such route in the budget');
  let admitted = 0;
  routes.forEach((route, index) => {
    const share = Math.floor(requests / routes.length) + (index < requests % routes.length ? 1 : 0);
    admitted += Math.min(share, route.throttle.burst, route.reservedConcurrency ?? Number.POSITIVE_INFINITY);
  });
  const unreserved = budget.accountConcurrency - budget.reservedConcurrency;
  const running = Math.min(admitted, unreserved);
  const servedAtOnce = Math.min(running, budget.routeConnections);
  return {
    throttledAtGateway: requests - admitted,
    throttledByLambda: admitted - running,
    servedAtOnce,
    waitingForConnection: running - servedAtOnce,
  };
}
