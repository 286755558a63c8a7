import { DomainError } from '../errors';

/** Errors of organizations, their members and allowances: each message written once. */

export class OrganizationNameTakenError extends DomainError {
  constructor() {
    super('ORGANIZATION_NAME_TAKEN', 'An organization with this name already exists');
  }
}

export class UnknownOrganizationError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'Unknown organization');
  }
}

export class NotAMemberError extends DomainError {
  constructor() {
    super('NOT_A_MEMBER', 'You are not a member of this organization');
  }
}

export class NoActivePlanRecordError extends DomainError {
  constructor() {
    super('NO_ACTIVE_PLAN_RECORD', 'The organization has no active plan record');
  }
}

export class NoPlanError extends DomainError {
  constructor() {
    super('NO_ACTIVE_PLAN', 'The organization has no plan');
  }
}

export class NoActivePlanError extends DomainError {
  constructor() {
    super('NO_ACTIVE_PLAN', 'The organization has no active plan');
  }
}

export class OwnerRoleChangeError extends DomainError {
  constructor() {
    super('INSUFFICIENT_ROLE', 'Only an owner may give or take the owner role');
  }
}

export class LastOwnerError extends DomainError {
  constructor() {
    super('LAST_OWNER', 'The organization must keep at least one owner');
  }
}

export class NothingToChangeError extends DomainError {
  constructor(index: number) {
    super('NOTHING_TO_CHANGE', `users[${index}] changes nothing: give a role, a name or an email`);
  }
}

export class MemberNotFoundError extends DomainError {
  constructor(userId: string) {
    super('NOT_FOUND', `User ${userId} is not a member of this organization`);
  }
}

export class UserNotMemberError extends DomainError {
  constructor() {
    super('NOT_FOUND', 'This user is not a member of the organization');
  }
}

export class MemberOfOtherOrganizationsError extends DomainError {
  constructor(userId: string) {
    super(
      'MEMBER_OF_OTHER_ORGANIZATIONS',
      `User ${userId} belongs to other organizations: their name and email cannot be changed here`,
    );
  }
}

export class EmailChangeNeedsSignInError extends DomainError {
  constructor() {
    super(
      'FORBIDDEN',
      'A login email can be changed only from a signed-in session, not with an automation or legacy token',
    );
  }
}

export class SuperAdminAccountError extends DomainError {
  constructor(userId: string) {
    super('INSUFFICIENT_ROLE', `User ${userId} is a super admin: their name and email cannot be changed here`);
  }
}

export class MemberNotOutrankedError extends DomainError {
  constructor(userId: string) {
    super('INSUFFICIENT_ROLE', `User ${userId} is not ranked below you: their name and email cannot be changed by you`);
  }
}

export class EmailTakenError extends DomainError {
  constructor(email: string | undefined) {
    super('EMAIL_TAKEN', `The email ${email ?? 'given twice'} belongs to another account`);
  }
}

export class StorageLimitReachedError extends DomainError {
  constructor(usage: { plan: { storageBytes: number }; storageUsed: number; storageReserved: number }, bytes: number) {
    super(
      'STORAGE_LIMIT_REACHED',
      `The plan's storage limit is reached (${usage.plan.storageBytes} bytes, ${usage.storageUsed} used, ${usage.storageReserved} promised to upload links, ${bytes} more asked)`,
    );
  }
}

export class DeviceLimitReachedError extends DomainError {
  constructor(devices: number) {
    super('DEVICE_LIMIT_REACHED', `The plan allows ${devices} devices and all are registered`);
  }
}

export class SeatLimitReachedError extends DomainError {
  constructor(usage: { plan: { seats: number }; seatsUsed: number }, asked: number) {
    super(
      'SEAT_LIMIT_REACHED',
      `The plan's seat limit is reached (${usage.plan.seats} seats, ${usage.seatsUsed} taken, ${asked} more asked)`,
    );
  }
}

/** 403: the enforced plan's new cases a calendar month are all used; they come back on the first of the next month (UTC). */
export class CaseLimitReachedError extends DomainError {
  constructor(cap: number, created: number, resetsAt: Date) {
    const resets = resetsAt.toISOString();
    super(
      'CASE_LIMIT_REACHED',
      `The plan allows ${cap} new cases a month and ${created} were created this month; the allowance resets at ${resets}`,
      {
        findings: [
          { path: 'casesPerMonth', message: String(cap) },
          { path: 'createdThisMonth', message: String(created) },
          { path: 'resetsAt', message: resets },
        ],
      },
    );
  }
}
