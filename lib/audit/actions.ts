/**
 * Every action the audit trail records, with what it means: dotted names, stable once published
 * (clients filter on them by prefix). The route table names the action each route records
 * (`audit` on its entry); docs/decisions.md explains what is recorded and why.
 */
export const AUDIT_ACTIONS = {
  // Sign-in, sessions and tokens of members: recorded in every organization the user belongs to.
  'auth.signed_in': 'A member signed in (a new sign-in session).',
  'auth.signed_out': 'A member signed out (the sign-in session ended).',
  'auth.session.refreshed': 'A sign-in session was refreshed (its refresh token rotated).',
  'auth.session.ended': 'A member ended one of their sessions.',
  'auth.token.created': 'A member created an automation token.',
  'auth.token.revoked': 'A member revoked an automation or legacy token.',
  'auth.token.scopes_changed': "A member changed an automation token's scopes.",
  'user.profile.updated': 'A member changed their name or other profile fields.',
  'user.password.changed': 'A member changed their password (other sessions ended).',
  'user.password_reset.requested': "A password reset link was requested for a member's address.",
  'user.password.reset': 'A member set a new password with a reset link (every session ended).',
  'user.email.verified': 'A member verified their email address.',
  'user.verification_email.sent': 'A member asked for a new verification email.',
  // The organization, its members and invitations.
  'user.registered': 'A user registered, opening the organization they own (its first event).',
  'organization.created': 'The organization was created (its creator is its owner).',
  'organization.updated': "The organization's name, address or other details changed.",
  'organization.member.invited': 'Someone was invited to join (one event per invitation).',
  'organization.invitation.resent': 'An invitation was sent again.',
  'organization.invitation.deleted': 'An invitation was withdrawn.',
  'organization.invitation.rejected': 'An invitation was rejected by its addressee.',
  'organization.member.joined': 'An invitation was accepted: a new member.',
  'organization.member.role_changed': "A member's role changed (one event per member).",
  'organization.member.updated': "A member's role, name or email changed (one event per member).",
  'organization.member.removed': 'A member was removed from, or left, the organization.',
  // Billing.
  'billing.plan.selected': 'A plan tier was chosen.',
  'billing.setup_session.created': 'A card set-up link was created.',
  'billing.report.created': 'A billing report was stored and a download link handed out.',
  'billing.processor_event.received': "The payment processor reported a change (a card saved, an invoice's outcome).",
  'billing.credits.granted': 'Staff added prepaid credits.',
  // Cases.
  'case.created': 'A case was opened.',
  'case.updated': "A case's details changed.",
  'case.deleted': 'A case was deleted.',
  'case.access.granted': 'A member was given (or changed) access to a case.',
  'case.access.revoked': "A member's access to a case was taken away.",
  'case.pro_upgrade.requested': 'A case was upgraded to Pro (a charge).',
  'case.pro.ended': 'A case stopped being Pro: the plan that included Pro was left or not paid.',
  'case.pro.restored': 'A case is Pro again: a plan that includes Pro is in force again.',
  // Evidence: imports, and every read of case evidence.
  'evidence.attachment_uploads.created': 'Upload links for device-note attachments were handed out.',
  'evidence.notes.imported': 'Device notes were imported by the desktop extractor.',
  'evidence.emails.imported': 'Emails were imported into the case.',
  'evidence.network_messages.imported': 'Professional-network messages were imported into the case.',
  'evidence.support_tickets.imported': 'Chat-platform support tickets were imported into the case.',
  'evidence.import.created': 'An evidence import was created and its upload link handed out.',
  'evidence.import.started': "An uploaded export was queued for import (its file now counts as the case's storage).",
  'evidence.import.retried': 'A failed import was queued again, to resume where it stopped.',
  'evidence.import.finished': 'An import job ended: succeeded, or failed with the error named.',
  'evidence.import.cancelled': 'An import was cancelled: what it had imported stays, it is not run again.',
  'evidence.email_threads.read': "The case's email threads were listed.",
  'evidence.thread_emails.read': "A thread's emails were read.",
  'evidence.network_messages.searched': "The case's professional-network messages were searched.",
  'evidence.support_tickets.read': "A profile's support tickets were read.",
  'evidence.custody.read': "The case's chain of custody was read (or stored as a PDF).",
  'evidence.custody.export_started': "A background export of the case's chain of custody as PDF volumes was started.",
  'evidence.custody.export_finished': 'A custody export ended: its volumes stored, or failed with the error named.',
  'evidence.object.downloaded': 'An evidence object (attachment) was downloaded through a signed link.',
  'evidence.object.integrity_failed': 'An evidence object no longer matched its recorded hash: not served.',
  // Review (extension): tags. Opposing counsel's tag events name no tag: keys and a SHA-256 only.
  'review.tag.created': 'A case, user or organization tag was created.',
  'review.tag.updated': "A tag's name, colours or severity changed (the fields named).",
  'review.tag.deactivated': 'A tag was deleted: deactivated, its links and their history kept.',
  // Review: case search
  'evidence.case.searched': "The case's evidence was searched across kinds (GET /cases/{caseId}/search).",
  // Review (extension): tagging evidence
  'evidence.tagged':
    'Tags were put on or taken off evidence: by items, a tagging job queued, or one batch of a job (opposing counsel: counts and a hash only).',
  'evidence.tagging_job.finished': 'A tagging job by filter ended: succeeded, or failed with the error named.',
} as const;

export type AuditAction = keyof typeof AUDIT_ACTIONS;

/** Who acted: `staff` never names the staff member (like billing history); `anonymous` is an unauthenticated caller. */
export const AUDIT_ACTOR_TYPES = ['user', 'automation_token', 'legacy_token', 'staff', 'system', 'anonymous'] as const;

export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];
