/**
 * What the service's metrics and traces are filed under. The stack sets the same values as
 * POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE / SERVICE_ENVIRONMENT on every function
 * (infra/constructs/service-function.ts); the environment variables win when set.
 */
export const METRICS_NAMESPACE = 'CaseEvidence';
export const SERVICE_NAME = 'case-evidence-billing';

export const metricsNamespace = (): string => process.env.POWERTOOLS_METRICS_NAMESPACE || METRICS_NAMESPACE;
export const serviceName = (): string => process.env.POWERTOOLS_SERVICE_NAME || SERVICE_NAME;
/** The `environment` dimension of every metric: dev, staging or prod (`local` outside the stack). */
export const environmentName = (): string => process.env.SERVICE_ENVIRONMENT || 'local';

const TRUE = new Set(['1', 'true', 'on', 'yes']);
const isTrue = (value: string) => TRUE.has(value.trim().toLowerCase());

/**
 * Metrics are written (EMF lines on stdout) only in Lambda, where CloudWatch turns them into
 * metrics: `AWS_LAMBDA_RUNTIME_API` is set by the Lambda runtime alone, not by the local server, the
 * tests or test/infra's bundle check. POWERTOOLS_METRICS_DISABLED decides when set (`false` turns
 * them on anywhere, as the metrics test does).
 */
export function metricsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const disabled = env.POWERTOOLS_METRICS_DISABLED;
  if (disabled !== undefined && disabled.trim() !== '') return !isTrue(disabled);
  return Boolean(env.AWS_LAMBDA_RUNTIME_API);
}

/**
 * Tracing runs only where an X-Ray daemon listens: Lambda sets AWS_XRAY_DAEMON_ADDRESS for a
 * function with active tracing. POWERTOOLS_TRACE_ENABLED=false turns it off there.
 */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const enabled = env.POWERTOOLS_TRACE_ENABLED;
  if (enabled !== undefined && enabled.trim().toLowerCase() === 'false') return false;
  return Boolean(env.AWS_XRAY_DAEMON_ADDRESS);
}
