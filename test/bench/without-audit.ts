import { measureWithoutAuditTrail } from '../../lib/audit/record';

/**
 * Preloaded into one bench server (`node --import tsx --import ./test/bench/without-audit.ts
 * infra/local/server.ts`): that process serves every route without its audit writes, so audit.ts
 * can measure what the trail costs. Other processes are unaffected.
 */
measureWithoutAuditTrail();
