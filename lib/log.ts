import { LogFormatter, LogItem, Logger } from '@aws-lambda-powertools/logger';
import type {
  LogAttributes,
  LogItemExtraInput,
  LogItemMessage,
  UnformattedAttributes,
} from '@aws-lambda-powertools/logger/types';
import { config } from './config';

/**
 * The one redaction step of the service's logs (issue 15): every line goes through
 * `RedactingLogFormatter` when, and only when, it is written. Logs keep what an operator needs
 * (error class and code, SQL text without parameters, route, request id) and never parameter
 * values, request bodies, emails, tokens, token or password hashes, or Authorization values.
 */

const REDACTED = '[redacted]';

/** Keys whose value is never logged, whatever it holds (compared lowercased, without - and _). */
const SECRET_KEY = /password|passwd|secret|token|authorization|cookie|email|apikey|credential|signature/;
const SECRET_KEY_EXACT = new Set(['body', 'rawbody', 'params', 'parameters', 'args']);

function isSecretKey(key: string): boolean {
  const normalized = key.toLowerCase().replace(/[-_\s]/g, '');
  return SECRET_KEY_EXACT.has(normalized) || SECRET_KEY.test(normalized);
}

/** Values in text, most specific first (a JWT or a scrypt hash holds runs the later rules would also cut). */
const TEXT_RULES: [RegExp, string | ((match: string) => string)][] = [
  // drizzle's "Failed query: <sql>\nparams: <values>": the values go, the SQL text stays.
  [/\n\s*params: [\s\S]*$/, ''],
  [/\b(Bearer|Basic)\s+[^\s"',;]+/gi, `$1 ${REDACTED}`],
  [/\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, '[jwt]'],
  // lib/secrets.ts hashPassword: scrypt$logN$r$p$salt$hash
  [/\bscrypt\$[^\s"',;)]*/g, '[password-hash]'],
  // lib/auth, lib/users, lib/organizations/invitations: cebs_rt_, cebs_at_, cebs_lt_, cebs_ev_, cebs_pr_, cebs_inv_ + base64url
  [/\bcebs_[a-z]{2,4}_[A-Za-z0-9_-]*/g, '[token]'],
  [/[A-Za-z0-9.!#$%&'*+=?^_{|}~-]+(?:@|%40)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)+/g, '[email]'],
  // Token hashes (SHA-256 hex) and other long hex digests.
  [/\b[0-9a-fA-F]{32,}\b/g, '[hex]'],
  // Opaque secrets (base64url or base64, 24+ random bytes): long runs mixing cases and digits, which
  // identifiers, constraint names and code paths do not.
  [
    /[A-Za-z0-9_+/-]{32,}={0,2}/g,
    (run) => (/[0-9]/.test(run) && /[a-z]/.test(run) && /[A-Z]/.test(run) ? '[opaque]' : run),
  ],
  // Postgres echoes the rejected value: invalid input syntax for type uuid: "..."
  [/(invalid input (?:syntax|value) for [^:"]*: )"[\s\S]*"/g, `$1"${REDACTED}"`],
];

/** Longest text kept of one value; what is past it is cut after scrubbing. */
const MAX_TEXT = 8_000;
const MAX_ITEMS = 50;
const MAX_DEPTH = 8;
const MAX_CAUSES = 5;

/** Scrubs emails, JWTs, bearer values, password hashes, tokens and their hashes, and drizzle's parameter list from text. */
export function scrubLogText(text: string): string {
  let scrubbed = text.length > MAX_TEXT ? text.slice(0, MAX_TEXT + 200) : text;
  for (const [pattern, replacement] of TEXT_RULES)
    scrubbed = scrubbed.replace(pattern, replacement as (match: string) => string);
  return scrubbed.length > MAX_TEXT ? `${scrubbed.slice(0, MAX_TEXT)}…[cut]` : scrubbed;
}

/**
 * What of an error is kept: its class, its code and the SQL text (the `query` property), the
 * names of the database objects involved, and where in the code. Anything else (`detail`, `where`,
 * `hint`, `parameters`, `params`, internal queries, unknown properties) can hold data and is dropped.
 */
const ERROR_FIELDS = [
  'code',
  'errno',
  'syscall',
  'address',
  'port',
  'severity',
  'severity_local',
  'schema',
  'schema_name',
  'table',
  'table_name',
  'column',
  'column_name',
  'dataType',
  'data type_name',
  'constraint',
  'constraint_name',
  'routine',
  'position',
  'statusCode',
  'type',
  'requestId',
  '$fault',
  '$metadata',
  'query',
] as const;

class RedactingLogFormatter extends LogFormatter {
  /** PowertoolsLogFormatter's keys (it is not exported), with the message and every attribute redacted. */
  override formatAttributes(attributes: UnformattedAttributes, additionalLogAttributes: LogAttributes): LogItem {
    const base: LogAttributes = {
      level: attributes.logLevel,
      message: this.redact(attributes.message, 0, new Set()) as string,
      timestamp: this.formatTimestamp(attributes.timestamp),
      service: attributes.serviceName,
      cold_start: attributes.lambdaContext?.coldStart,
      function_arn: attributes.lambdaContext?.invokedFunctionArn,
      function_memory_size: attributes.lambdaContext?.memoryLimitInMB,
      function_name: attributes.lambdaContext?.functionName,
      function_request_id: attributes.lambdaContext?.awsRequestId,
      sampling_rate: attributes.sampleRateValue,
      xray_trace_id: attributes.xRayTraceId,
      tenant_id: attributes.lambdaContext?.tenantId,
    };
    return new LogItem({ attributes: base }).addAttributes(
      this.redact(additionalLogAttributes, 0, new Set()) as LogAttributes,
    );
  }

  /** Also reached from the logger's JSON replacer, should an Error ever get past `formatAttributes`. */
  override formatError(error: Error): LogAttributes {
    return this.redactError(error, 0);
  }

  private redactError(error: Error, causes: number): LogAttributes {
    const name = typeof error.name === 'string' ? scrubLogText(error.name) : 'Error';
    const message = scrubLogText(String(error.message ?? ''));
    const source = error as unknown as Record<string, unknown>;
    const formatted: LogAttributes = { name, location: this.getCodeLocation(error.stack), message };
    for (const field of ERROR_FIELDS) {
      const value = source[field];
      if (value !== undefined && value !== null && value !== '') formatted[field] = this.redact(value, 1, new Set());
    }
    // The stack's frames are code locations; its head repeats the message, so it gets the scrubbed one.
    if (typeof error.stack === 'string') {
      const frames = error.stack.split('\n').filter((line) => /^\s+at /.test(line));
      formatted.stack = [`${name}: ${message}`, ...frames].join('\n');
    }
    if (Array.isArray(source.errors) && error instanceof AggregateError) {
      formatted.errors = source.errors
        .slice(0, MAX_CAUSES)
        .map((inner) =>
          inner instanceof Error ? this.redactError(inner, causes + 1) : this.redact(inner, 1, new Set()),
        );
    }
    const { cause } = error;
    if (cause !== undefined && cause !== null) {
      formatted.cause =
        cause instanceof Error
          ? causes < MAX_CAUSES
            ? this.redactError(cause, causes + 1)
            : '[cause chain cut]'
          : this.redact(cause, 1, new Set());
    }
    return formatted;
  }

  /** A copy safe to write: secret keys redacted, text scrubbed, errors reduced to their kept fields. */
  private redact(value: unknown, depth: number, seen: Set<object>): unknown {
    if (typeof value === 'string') return scrubLogText(value);
    if (value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
    if (value instanceof Error) return this.redactError(value, 0);
    if (value instanceof Date) return value;
    if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return '[binary]';
    if (seen.has(value)) return '[circular]';
    if (depth >= MAX_DEPTH) return '[nested too deep]';
    seen.add(value);
    try {
      if (Array.isArray(value)) {
        const items = value.slice(0, MAX_ITEMS).map((item) => this.redact(item, depth + 1, seen));
        if (value.length > MAX_ITEMS) items.push(`[${value.length - MAX_ITEMS} more]`);
        return items;
      }
      const copy: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        copy[key] =
          isSecretKey(key) && item !== undefined && item !== null ? REDACTED : this.redact(item, depth + 1, seen);
      }
      return copy;
    } finally {
      seen.delete(value);
    }
  }
}

type LogKeys = Parameters<Logger['appendKeys']>[0];

let powertools: Logger | undefined;
/** Keys appended before the logger exists, replayed in order when it is created. */
let pendingKeys: LogKeys[] = [];

/**
 * The Powertools logger, created on the first line written (or level read or set). Creating it
 * opens a Console on process.stdout and process.stderr, a good part of what the logger costs a
 * cold start (infra/bench/README.md), and most requests write no line.
 */
function powertoolsLogger(): Logger {
  if (powertools) return powertools;
  powertools = new Logger({
    serviceName: 'case-evidence-billing',
    logLevel: config().LOG_LEVEL,
    logFormatter: new RedactingLogFormatter(),
  });
  for (const keys of pendingKeys) powertools.appendKeys(keys);
  pendingKeys = [];
  return powertools;
}

/**
 * Structured JSON logs; the endpoint middleware adds the request id to every line. Keys appended
 * and removed before any line is written never create the logger (a request that logs nothing).
 */
export const logger = {
  debug: (input: LogItemMessage, ...extra: LogItemExtraInput) => powertoolsLogger().debug(input, ...extra),
  info: (input: LogItemMessage, ...extra: LogItemExtraInput) => powertoolsLogger().info(input, ...extra),
  warn: (input: LogItemMessage, ...extra: LogItemExtraInput) => powertoolsLogger().warn(input, ...extra),
  error: (input: LogItemMessage, ...extra: LogItemExtraInput) => powertoolsLogger().error(input, ...extra),
  getLevelName: () => powertoolsLogger().getLevelName(),
  setLogLevel: (level: Parameters<Logger['setLogLevel']>[0]) => powertoolsLogger().setLogLevel(level),
  appendKeys(keys: LogKeys): void {
    if (powertools) powertools.appendKeys(keys);
    else pendingKeys.push(keys);
  },
  removeKeys(keys: string[]): void {
    if (powertools) powertools.removeKeys(keys);
    // Removing a key undoes every earlier append of it; the logger has no other keys yet.
    else
      pendingKeys = pendingKeys
        .map((appended) => Object.fromEntries(Object.entries(appended).filter(([key]) => !keys.includes(key))))
        .filter((appended) => Object.keys(appended).length > 0);
  },
};
