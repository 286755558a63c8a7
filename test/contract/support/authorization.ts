/** The expectations live in test/harness/authorization.ts, shared with the per-route security suite. */
export {
  AUTH_REFUSALS,
  CALLERS,
  type Caller,
  callerName,
  type Expected,
  expectedFor,
  meets,
  type Observed,
  tokenScopes,
} from '../../harness/authorization';
