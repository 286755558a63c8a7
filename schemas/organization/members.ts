import * as z from 'zod/mini';
import { INVITATION_STATUSES } from '../../lib/organizations/invitations/statuses';
import { DateTime, DisplayName, Email, Id, IdText } from '../common/fields';
import { BillingSummaryEntity, OrganizationEntity, OrganizationRoleEnum } from '../common/organization';
import { PageEntity, PagingQuery } from '../common/paging';
import { UserEntity } from '../user/user-entity';

export const MembersQuery = z.object({
  ...PagingQuery,
  searchText: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(100))),
  role: z.optional(OrganizationRoleEnum),
  sortBy: z.optional(z.enum(['createdAt'])),
});

export const MemberEntity = z
  .object({
    user: z.object({ id: Id, name: z.string(), email: z.string() }),
    role: OrganizationRoleEnum,
    lastActivityAt: z.nullable(DateTime),
  })
  .register(z.globalRegistry, { id: 'MemberEntity' });

export const MemberPageEntity = PageEntity(MemberEntity).register(z.globalRegistry, { id: 'MemberPageEntity' });

export const UpdateOrganizationUserAccessDto = z
  .object({ userIds: z.array(IdText).check(z.minLength(1), z.maxLength(100)), role: OrganizationRoleEnum })
  .register(z.globalRegistry, { id: 'UpdateOrganizationUserAccessDto' });

export const UpdateOrganizationUsersDto = z
  .object({
    users: z
      .array(
        z.object({
          userId: IdText,
          role: z.optional(OrganizationRoleEnum),
          name: z.optional(DisplayName),
          email: z.optional(Email),
        }),
      )
      .check(z.minLength(1), z.maxLength(100)),
  })
  .register(z.globalRegistry, { id: 'UpdateOrganizationUsersDto' });

export const MemberPath = z.object({ orgId: IdText, userId: IdText });

const PersonEntity = z.nullable(z.object({ id: Id, name: z.string(), email: z.string() }));

export const InvitationEntity = z
  .object({
    id: Id,
    email: z.string(),
    role: OrganizationRoleEnum,
    status: z.enum(INVITATION_STATUSES),
    expiresAt: DateTime,
    invitedBy: PersonEntity,
    invitedUser: PersonEntity,
    acceptedBy: PersonEntity,
    organization: z.nullable(OrganizationEntity),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .register(z.globalRegistry, { id: 'InvitationEntity' });

export const InvitationPageEntity = PageEntity(InvitationEntity).register(z.globalRegistry, {
  id: 'InvitationPageEntity',
});

const InvitationSort = {
  sortBy: z.optional(z.enum(['createdAt', 'updatedAt', 'email'])),
  userRole: z.optional(OrganizationRoleEnum),
  organization: z.optional(IdText),
};

export const InvitationsQuery = z.object({
  ...PagingQuery,
  ...InvitationSort,
  searchText: z.optional(z.string().check(z.trim(), z.minLength(3), z.maxLength(100))),
  status: z.optional(z.enum(INVITATION_STATUSES)),
});

export const PendingInvitationsQuery = z.object({ ...PagingQuery, ...InvitationSort });

export const InviteOrganizationUsersDto = z
  .object({ emails: z.array(Email).check(z.minLength(1), z.maxLength(50)), role: z.optional(OrganizationRoleEnum) })
  .register(z.globalRegistry, { id: 'InviteOrganizationUsersDto' });

export const InvitationPath = z.object({ orgId: IdText, invitationId: IdText });

const EmailedToken = z.string().check(z.minLength(1), z.maxLength(512));

export const AcceptOrganizationInvitationRequestDto = z
  .object({
    token: EmailedToken,
    email: Email,
    name: z.optional(DisplayName),
    password: z.optional(z.string().check(z.minLength(8), z.maxLength(128))),
  })
  .register(z.globalRegistry, { id: 'AcceptOrganizationInvitationRequestDto' });

export const RejectOrganizationInvitationRequestDto = z
  .object({ token: EmailedToken, email: Email, reason: z.optional(z.string().check(z.trim(), z.maxLength(1000))) })
  .register(z.globalRegistry, { id: 'RejectOrganizationInvitationRequestDto' });

export const AcceptInvitationResponseEntity = z
  .object({
    organization: OrganizationEntity,
    permission: z.object({ role: OrganizationRoleEnum }),
    billing: z.nullable(BillingSummaryEntity),
    login: z.nullable(z.object({ accessToken: z.string(), refreshToken: z.string(), userProfile: UserEntity })),
  })
  .register(z.globalRegistry, { id: 'AcceptInvitationResponseEntity' });
