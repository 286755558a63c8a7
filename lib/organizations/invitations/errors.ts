import { DomainError } from '../../errors';
import type { OrganizationRole } from '../roles';

/** Errors of invitations: each message written once. */

export class InviteRoleNotAllowedError extends DomainError {
  constructor(inviterRole: OrganizationRole, role: OrganizationRole) {
    super('INVITE_ROLE_NOT_ALLOWED', `Your role (${inviterRole}) may not invite someone as ${role}`);
  }
}

export class UnknownInvitationError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Unknown invitation');
  }
}

export class InvitationNotPendingError extends DomainError {
  constructor(status: string) {
    super('INVITATION_NOT_PENDING', `The invitation is ${status}`);
  }
}

export class InvitationAlreadyAcceptedError extends DomainError {
  constructor() {
    super('INVITATION_NOT_PENDING', 'The invitation was already accepted');
  }
}

export class InvitationNoLongerPendingError extends DomainError {
  constructor(status: string) {
    super('INVITATION_NOT_PENDING', `The invitation is no longer pending (${status})`);
  }
}

export class InvitationExpiredError extends DomainError {
  constructor() {
    super('TOKEN_EXPIRED', 'The invitation has expired');
  }
}

/** Accepting needs a name and a password: to create the account, or to take over an unverified one. */
export class InviteeDetailsRequiredError extends DomainError {
  constructor(takeover: boolean) {
    super(
      'INVITEE_DETAILS_REQUIRED',
      takeover
        ? 'name and password are required to take over the unverified account of this address'
        : 'name and password are required to create your account',
    );
  }
}

export class AccountJustDeletedError extends DomainError {
  constructor() {
    super('USER_NOT_CREATED', 'The account of this address was just deleted; accept again');
  }
}

export class AccountJustCreatedError extends DomainError {
  constructor() {
    super('USER_NOT_CREATED', 'An account with this email was just created; sign in and accept again');
  }
}
