import * as z from 'zod/mini';
import { DisplayName, Email, Id } from '../common/fields';
import { OrganizationDetailsResponseEntity, OrganizationEntity, OrganizationRoleEnum } from '../common/organization';
import { PageEntity, QueryList } from '../common/paging';

export const OrganizationIdPath = z.object({ orgId: Id });

export const CreateOrganizationDto = z
  .strictObject({ name: DisplayName, inviteEmails: z.optional(z.array(Email).check(z.maxLength(50))) })
  .register(z.globalRegistry, { id: 'CreateOrganizationDto' });

export const ValidateOrganizationNameDto = z.strictObject({ name: DisplayName }).register(z.globalRegistry, { id: 'ValidateOrganizationNameDto' });

export const ValidateOrganizationNameResponseEntity = z
  .object({ isValid: z.boolean() })
  .register(z.globalRegistry, { id: 'ValidateOrganizationNameResponseEntity' });

const ShortText = (max: number) => z.string().check(z.trim(), z.maxLength(max));
const JsonObject = z.record(z.string().check(z.maxLength(100)), z.unknown());

export const UpdateOrganizationDto = z
  .strictObject({
    name: z.optional(DisplayName),
    email: z.optional(z.union([Email, z.literal('')])),
    contact: z.optional(ShortText(200)),
    city: z.optional(ShortText(100)),
    state: z.optional(ShortText(100)),
    country: z.optional(ShortText(100)),
    description: z.optional(ShortText(2000)),
    phone: z.optional(z.array(ShortText(40)).check(z.maxLength(10))),
    // http(s) only: a javascript: or data: "logo" would be script in any client that links it.
    logo: z.optional(z.nullable(z.url({ protocol: /^https?$/ }).check(z.maxLength(2048)))),
    metadata: z.optional(JsonObject),
    autoAcceptInvitations: z.optional(z.boolean()),
    communicationPreferences: z.optional(JsonObject),
    acceptBankLinkingTerms: z.optional(z.boolean()),
  })
  .register(z.globalRegistry, { id: 'UpdateOrganizationDto' });

export const SlugPath = z.object({ slug: z.string().check(z.minLength(1), z.maxLength(80)) });

export const DeviceTypeEnum = z.enum(['unknown', 'android', 'ios', 'facebook_dump', 'instagram_dump', 'threads_dump', 'email']);

export const UsagesStatQuery = z.object({
  deviceId: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  deviceType: z.optional(DeviceTypeEnum),
});

export const OrganizationPlanUsageEntity = z
  .object({
    billingModel: z.string(),
    planType: z.string(),
    isPlanActive: z.boolean(),
    isPlanPaid: z.boolean(),
    seats: z.number(),
    seatsUsed: z.number(),
    remainingSeats: z.number(),
    devices: z.number(),
    devicesUsed: z.number(),
    remainingDevices: z.number(),
    storage: z.number(),
    storageUsed: z.number(),
    remainingStorage: z.number(),
    storageInKb: z.number(),
    storageUsedInKb: z.number(),
    storageInMb: z.number(),
    storageUsedInMb: z.number(),
    storageInGb: z.number(),
    storageUsedInGb: z.number(),
    storageInTb: z.number(),
    storageUsedInTb: z.number(),
    canManageBilling: z.boolean(),
    isNewDevice: z.nullable(z.boolean()),
  })
  .register(z.globalRegistry, { id: 'OrganizationPlanUsageEntity' });

export const StorageStatsQuery = z.object({ caseIds: z.optional(QueryList(Id)) });

export const StorageStatsEntity = z
  .object({
    totalStorage: z.number(),
    cases: z.array(z.object({ caseId: Id, caseName: z.string(), storage: z.number() })),
  })
  .register(z.globalRegistry, { id: 'StorageStatsEntity' });

export const OrganizationListEntity = PageEntity(OrganizationDetailsResponseEntity).register(z.globalRegistry, {
  id: 'OrganizationListEntity',
});

export { OrganizationDetailsResponseEntity, OrganizationEntity, OrganizationRoleEnum };
