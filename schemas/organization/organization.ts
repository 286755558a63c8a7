import * as z from 'zod/mini';
import { DEVICE_TYPES } from '../../lib/organizations/device-types';
import { hasInvisibleCharacters, VISIBLE_TEXT_PATTERN } from '../../lib/organizations/name-key';
import { EnforcedPlanEntity } from '../billing/billing';
import { DisplayName, Email, Id, IdText } from '../common/fields';
import { OrganizationDetailsResponseEntity, OrganizationEntity, OrganizationRoleEnum } from '../common/organization';
import { PageEntity, QueryList } from '../common/paging';

export const OrganizationIdPath = z.object({ orgId: IdText });

/**
 * An organization name: display text with no invisible character (zero-width, bidi controls...):
 * names are unique once those, case and look-alike letters are folded (lib/organizations/name-key.ts).
 */
export const OrganizationName = DisplayName.check(
  z.refine((name: string) => !hasInvisibleCharacters(name), {
    message: 'Must not contain invisible characters (zero-width or bidi control characters)',
  }),
).register(z.globalRegistry, {
  // The refinement above, stated for clients (it is checked on the NFKC form of the name).
  pattern: VISIBLE_TEXT_PATTERN,
  description:
    'No invisible characters: default-ignorable code points (zero-width space and joiners, soft hyphen, variation selectors), format characters (bidi controls), controls, line and paragraph separators. Unique once case, those characters and look-alike letters are folded.',
});

/** Largest serialized size (UTF-8 bytes of its JSON) of the organization's `metadata`. */
export const METADATA_MAX_BYTES = 16 * 1024;
/** Largest serialized size of `communicationPreferences`. */
export const COMMUNICATION_PREFERENCES_MAX_BYTES = 4 * 1024;

export const CreateOrganizationDto = z
  .object({ name: OrganizationName, inviteEmails: z.optional(z.array(Email).check(z.maxLength(50))) })
  .register(z.globalRegistry, { id: 'CreateOrganizationDto' });

export const ValidateOrganizationNameDto = z
  .object({ name: DisplayName })
  .register(z.globalRegistry, { id: 'ValidateOrganizationNameDto' });

export const ValidateOrganizationNameResponseEntity = z
  .object({ isValid: z.boolean() })
  .register(z.globalRegistry, { id: 'ValidateOrganizationNameResponseEntity' });

const ShortText = (max: number) => z.string().check(z.trim(), z.maxLength(max));
/** A free-form object, at most `maxBytes` once serialized (keys up to 100 characters). */
const JsonObject = (maxBytes: number) =>
  z
    .record(z.string().check(z.maxLength(100)), z.unknown())
    .check(
      z.refine((value) => Buffer.byteLength(JSON.stringify(value), 'utf8') <= maxBytes, {
        message: `Must be at most ${maxBytes} bytes as JSON`,
      }),
    )
    .register(z.globalRegistry, { description: `Free-form object, at most ${maxBytes} bytes as JSON` });

/** A postal address; every line optional (unknown keys are dropped). Sent whole: it replaces the stored one. */
export const PostalAddressDto = z
  .object({
    line1: z.optional(ShortText(200)),
    line2: z.optional(ShortText(200)),
    city: z.optional(ShortText(100)),
    state: z.optional(ShortText(100)),
    postalCode: z.optional(ShortText(20)),
    country: z.optional(ShortText(100)),
  })
  .register(z.globalRegistry, { id: 'PostalAddressDto' });

/**
 * The address as clients send it: the object, or a string taken as its street line (`line1`; the
 * other lines are then gone, as when the object is sent). A blank string clears it, like null.
 */
const AddressInput = z.union([
  PostalAddressDto,
  z.pipe(
    ShortText(200),
    z.transform((line1): { line1: string } | null => (line1 === '' ? null : { line1 })),
  ),
]);

export const UpdateOrganizationDto = z
  .object({
    name: z.optional(OrganizationName),
    email: z.optional(z.union([Email, z.literal('')])),
    contact: z.optional(ShortText(200)),
    city: z.optional(ShortText(100)),
    state: z.optional(ShortText(100)),
    country: z.optional(ShortText(100)),
    description: z.optional(ShortText(2000)),
    phone: z.optional(z.array(ShortText(40)).check(z.maxLength(10))),
    // http(s) only: a javascript: or data: "logo" would be script in any client that links it.
    logo: z.optional(z.nullable(z.url({ protocol: /^https?$/ }).check(z.maxLength(2048)))),
    metadata: z.optional(JsonObject(METADATA_MAX_BYTES)),
    autoAcceptInvitations: z.optional(z.boolean()),
    /** The whole address, or its street line as a string; null or a blank string clears it. */
    address: z.optional(z.nullable(AddressInput)),
    communicationPreferences: z.optional(JsonObject(COMMUNICATION_PREFERENCES_MAX_BYTES)),
    /** true records the acceptance (the first one's time and user are kept); false withdraws it. */
    bankLinkingTermsAccepted: z.optional(z.boolean()),
  })
  .register(z.globalRegistry, { id: 'UpdateOrganizationDto' });

export const SlugPath = z.object({ slug: z.string().check(z.minLength(1), z.maxLength(80)) });

export const DeviceTypeEnum = z.enum(DEVICE_TYPES);

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
    /** The plan whose caps the figures below are (benefits follow payment). */
    enforcedPlan: EnforcedPlanEntity,
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

export const StorageStatsQuery = z.object({ caseIds: z.optional(QueryList(IdText)) });

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
