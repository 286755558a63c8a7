import { Logger } from '@aws-lambda-powertools/logger';
import { config } from './config';

/** Structured JSON logs; the endpoint middleware adds the request id to every line. */
export const logger = new Logger({ serviceName: 'case-evidence-billing', logLevel: config().LOG_LEVEL });
