import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { logger } from '../log';
import { environmentName, metricsNamespace, serviceName } from './names';

/**
 * Powertools Metrics, loaded by ./metrics.ts only when metrics are on (in Lambda): nothing of it
 * is evaluated locally or in tests unless they turn metrics on.
 */

/**
 * Powertools warns on every invocation that published no business metric; that is the normal case
 * here (most requests move no money and no evidence), so that one warning is a debug line.
 */
const metricsLogger = {
  debug: (...content: unknown[]) => logger.debug(String(content[0]), { detail: content.slice(1) }),
  info: (...content: unknown[]) => logger.info(String(content[0]), { detail: content.slice(1) }),
  warn: (...content: unknown[]) =>
    String(content[0]).startsWith('No application metrics to publish')
      ? logger.debug(String(content[0]))
      : logger.warn(String(content[0]), { detail: content.slice(1) }),
  error: (...content: unknown[]) => logger.error(String(content[0]), { detail: content.slice(1) }),
};

export const metrics = new Metrics({
  namespace: metricsNamespace(),
  serviceName: serviceName(),
  defaultDimensions: { environment: environmentName() },
  logger: metricsLogger,
});

/**
 * Adds `value` to the invocation's metrics (written when the invocation ends). A metric with
 * dimensions of its own (the import kind) is written at once on its own line, so those dimensions
 * do not land on the invocation's other metrics.
 */
export function add(name: string, value: number, dimensions?: Record<string, string>): void {
  if (dimensions) {
    const single = metrics.singleMetric();
    single.addDimensions(dimensions);
    single.addMetric(name, MetricUnit.Count, value);
    return;
  }
  metrics.addMetric(name, MetricUnit.Count, value);
}

/** Powertools' middy middleware: the cold-start metric, and the invocation's metrics flushed at its end (or error). */
export const middleware = () => logMetrics(metrics, { captureColdStartMetric: true });
