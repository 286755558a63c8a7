import { transaction } from '../db/transaction';
import { type AuditEventInput, recordAudit } from './record';

export { AUDIT_ACTIONS, AUDIT_ACTOR_TYPES, type AuditAction, type AuditActorType } from './actions';
export { canonicalEvent, eventHash, GENESIS_HASH } from './chain';
export { auditEventEntity, listAuditEvents } from './list';
export { READ_WINDOW_SECONDS, readMetadata, recordEvidenceRead } from './read-events';
export { sealWorkProduct } from './work-product';
export { type AuditEventInput, recordAudit, recordMemberAudit } from './record';
export {
  type AuditActor,
  type AuditScope,
  auditActorOf,
  currentAuditScope,
  provenUser,
  STAFF_ACTOR,
  SYSTEM_ACTOR,
  SYSTEM_SCOPE,
  withAuditScope,
} from './scope';
export { continueFullVerifications } from './full-verification';
export {
  type ChainVerification,
  organizationsWithAuditEvents,
  type TrailVerification,
  verifyAuditChain,
  verifyAuditTrail,
} from './verify';

/** Records one event in a transaction of its own: a read, where there is no change to commit it with. */
export function recordAuditNow(event: AuditEventInput): Promise<void> {
  return transaction(async (tx) => {
    recordAudit(tx, event);
  });
}
