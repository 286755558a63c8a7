import * as z from 'zod/mini';
import { DEVICE_TYPES } from '../../lib/organizations/device-types';
import { DateTime, Id, IdText, QueryBoolean } from '../common/fields';
import { OrganizationEntity } from '../common/organization';
import { PageEntity, PagingQuery, QueryList } from '../common/paging';

/**
 * The headers an upload link's PUT must carry exactly (the link is signed over them), plus
 * `Content-MD5`, which only the client can compute: the evidence bucket is under S3 Object Lock,
 * which refuses an upload without it (and a body that does not match it, 400).
 */
export const UploadHeaders = z.record(z.string(), z.string()).register(z.globalRegistry, {
  description:
    'Headers the PUT must carry exactly (the link is signed over them). Also send Content-MD5, the base64 MD5 of the body: the bucket is under S3 Object Lock and refuses an upload without it; a body that does not match it is refused with 400.',
});

const Address = z.object({ name: z.optional(z.string()), email: z.optional(z.string()) });

export const AttachmentEntity = z
  .object({
    id: Id,
    name: z.string(),
    providerId: z.string(),
    convertedName: z.nullable(z.string()),
    convertedProviderId: z.string(),
    provider: z.string(),
    size: z.number(),
    transferState: z.nullable(z.number()),
    /** SHA-256 (hex) of the attachment's bytes at import; null for attachments imported before hashes were kept. */
    sha256: z.nullable(z.string()),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .register(z.globalRegistry, { id: 'AttachmentEntity' });

export const TagEntity = z
  .object({
    id: Id,
    name: z.string(),
    nameLowercase: z.string(),
    backgroundColor: z.string(),
    textColor: z.string(),
    type: z.enum(['system', 'organization', 'case', 'user']),
    severity: z.enum(['info', 'warning', 'danger']),
    origin: z.enum(['manual', 'auto-import']),
    creatorAccessType: z.optional(z.nullable(z.enum(['org', 'opposing_council']))),
    isActive: z.boolean(),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .register(z.globalRegistry, { id: 'TagEntity' });

const AddedBy = z.enum(['user', 'ai', 'auto', 'auto-import', 'system', 'default']);

export const AttachedTagEntity = z
  .object({
    tagId: Id,
    tag: z.string(),
    addedBy: AddedBy,
    addedById: z.nullable(z.string()),
    removedAt: z.nullable(DateTime),
    removedBy: z.nullable(AddedBy),
    removedById: z.nullable(z.string()),
  })
  .register(z.globalRegistry, { id: 'AttachedTagEntity' });

export const EmailRecordEntity = z
  .object({
    id: Id,
    emailDataProvider: z.null(),
    sourceEmail: z.string(),
    body: z.nullable(z.string()),
    date: z.nullable(DateTime),
    attachments: z.nullable(z.array(AttachmentEntity)),
    bcc: z.array(Address),
    cc: z.array(Address),
    from: z.array(Address),
    replyTo: z.array(Address),
    to: z.array(Address),
    folders: z.array(z.string()),
    grantId: z.string(),
    externalId: z.string(),
    object: z.nullable(z.string()),
    snippet: z.nullable(z.string()),
    starred: z.boolean(),
    unread: z.boolean(),
    subject: z.nullable(z.string()),
    threadId: Id,
    threadIndex: z.number(),
    tags: z.nullable(z.array(TagEntity)),
    attachedTags: z.optional(z.array(AttachedTagEntity)),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .register(z.globalRegistry, { id: 'EmailRecordEntity' });

export const EmailPageEntity = PageEntity(EmailRecordEntity).register(z.globalRegistry, { id: 'EmailPageEntity' });

const Domain = z.string().check(z.trim(), z.minLength(1), z.maxLength(253));

/** Query list values as compared: domains and tag ids (UUIDs) match in any letter case. */
export const lowercased = (values: string[] | undefined) =>
  (values ?? []).map((v) => v.trim().toLowerCase()).filter(Boolean);

/** The values of `list` that `excluded` also names, as compared. */
export const overlap = (list: string[] | undefined, excluded: string[] | undefined) => {
  const exclude = lowercased(excluded);
  return lowercased(list).filter((value) => exclude.includes(value));
};

/**
 * The thread email filters (and the tagging job's filter over them) refuse a domain or a tag both
 * asked for and excluded: 400 naming `excludeDomains` or `excludeTags`, one problem at a time,
 * domains first.
 */
export function refuseOverlappingFilters(
  filter: { domains?: string[]; excludeDomains?: string[]; tags?: string[]; excludeTags?: string[] },
  ctx: z.core.$RefinementCtx,
): void {
  const domains = overlap(filter.domains, filter.excludeDomains);
  const tags = overlap(filter.tags, filter.excludeTags);
  if (domains.length)
    ctx.addIssue({
      code: 'custom',
      path: ['excludeDomains'],
      message: `domains and excludeDomains overlap: ${domains.join(', ')}`,
    });
  else if (tags.length)
    ctx.addIssue({
      code: 'custom',
      path: ['excludeTags'],
      message: `tags and excludeTags overlap: ${tags.join(', ')}`,
    });
}

export const ThreadEmailsQuery = z
  .object({
    ...PagingQuery,
    folders: z.optional(QueryList(z.string().check(z.minLength(1), z.maxLength(200)))),
    domains: z.optional(QueryList(Domain)),
    excludeDomains: z.optional(QueryList(Domain)),
    tags: z.optional(QueryList(IdText)),
    excludeTags: z.optional(QueryList(IdText)),
    excludeEmails: z.optional(QueryList(z.string().check(z.minLength(3), z.maxLength(254)))),
    starred: z.optional(QueryBoolean),
    unread: z.optional(QueryBoolean),
    untagged: z.optional(QueryBoolean),
    sortBy: z.optional(z.enum(['date'])),
  })
  // A value both asked for and excluded is a mistake in the request, refused before the case is looked at.
  .check(z.superRefine(refuseOverlappingFilters));

export const ThreadPath = z.object({ caseId: IdText, threadId: IdText });

export const EmailThreadPageEntity = PageEntity(
  z.object({
    id: Id,
    subject: z.nullable(z.string()),
    participants: z.array(z.string()),
    messageCount: z.number(),
    lastMessageAt: z.nullable(DateTime),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
).register(z.globalRegistry, { id: 'EmailThreadPageEntity' });

export const MaterialPagingQuery = z.object(PagingQuery);

export const ProfilePageEntity = PageEntity(
  z.object({
    id: Id,
    externalId: z.string(),
    name: z.string(),
    platform: z.enum(['professional_network', 'chat_platform']),
    visibleToOpposingCounsel: z.boolean(),
  }),
).register(z.globalRegistry, { id: 'ProfilePageEntity' });

export const SearchMessagesQuery = z.object({
  ...PagingQuery,
  searchText: z.string().check(z.trim(), z.minLength(1), z.maxLength(200)),
  tags: z.optional(QueryList(IdText, 20)),
});

export const ProfessionalNetworkMessageEntity = z
  .object({
    id: Id,
    from: z.string(),
    to: z.string(),
    date: DateTime,
    subject: z.nullable(z.string()),
    content: z.string(),
    folder: z.nullable(z.string()),
    isDraft: z.boolean(),
    attachments: z.string(),
    conversationId: Id,
    conversationTitle: z.nullable(z.string()),
    participants: z.array(z.string()),
    profileId: Id,
  })
  .register(z.globalRegistry, { id: 'ProfessionalNetworkMessageEntity' });

export const ProfessionalNetworkMessagePageEntity = PageEntity(ProfessionalNetworkMessageEntity).register(
  z.globalRegistry,
  {
    id: 'ProfessionalNetworkMessagePageEntity',
  },
);

export const ChatProfilePath = z.object({ caseId: IdText, chatPlatformId: IdText });

export const SupportTicketsQuery = z.object({
  ...PagingQuery,
  searchText: z.optional(z.string().check(z.trim(), z.maxLength(200))),
});

export const SupportTicketEntity = z
  .object({
    id: Id,
    chatUserProvider: Id,
    ticketId: z.number(),
    subject: z.nullable(z.string()),
    status: z.nullable(z.string()),
    ticketCreatedAt: z.nullable(DateTime),
    comments: z.array(z.object({ author: z.string(), comment: z.string(), createdAt: DateTime })),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .register(z.globalRegistry, { id: 'SupportTicketEntity' });

export const SupportTicketPageEntity = PageEntity(SupportTicketEntity).register(z.globalRegistry, {
  id: 'SupportTicketPageEntity',
});

const JsonObject = z.record(z.string().check(z.maxLength(200)), z.unknown());
const ShortText = z.string().check(z.maxLength(500));

export const ImportNotesQuery = z.object({ caseId: IdText });

/**
 * An attachment reference of a note: the key an upload link of this case returned. The domain
 * refuses any other (lib/material/notes.ts, 400 naming `notes.N.attachments.M`); the pattern and
 * description state that rule for clients.
 */
const AttachmentKey = z.string().check(z.minLength(1), z.maxLength(1024)).register(z.globalRegistry, {
  pattern: '^cases/[^/]+(/(?!\\.\\.?(/|$))[^/]+)+$',
  description:
    'The `key` an attachment upload link of this case returned (POST .../attachment-uploads): `cases/{caseId}/...` with the caseId of the path, no empty, `.` or `..` segment; the object must be uploaded first.',
});

export const ImportCaseNotesDto = z
  .object({
    deviceId: z.string().check(z.minLength(1), z.maxLength(200)),
    deviceType: z.enum(DEVICE_TYPES),
    deviceMetadata: z.optional(JsonObject),
    systemId: z.string().check(z.minLength(1), z.maxLength(200)),
    appVersion: z.string().check(z.minLength(1), z.maxLength(50)),
    osDetails: z.object({
      arch: z.optional(ShortText),
      platform: z.optional(ShortText),
      version: z.optional(ShortText),
      osType: z.optional(ShortText),
      machine: z.optional(ShortText),
      totalMemory: z.optional(z.number()),
      cpus: JsonObject,
      extraInformation: JsonObject,
    }),
    notes: z
      .array(
        z.object({
          id: z.int().check(z.minimum(0)),
          title: z.string().check(z.maxLength(1000)),
          summary: z.optional(z.string().check(z.maxLength(10_000))),
          createdAt: z.optional(ShortText),
          modifiedAt: z.optional(ShortText),
          htmlContent: z.optional(z.string().check(z.maxLength(1_000_000))),
          metadata: z.optional(JsonObject),
          attachments: z.optional(z.array(AttachmentKey).check(z.maxLength(100))),
        }),
      )
      .check(z.maxLength(5000)),
  })
  .register(z.globalRegistry, {
    id: 'ImportCaseNotesDto',
    // The figure is MAX_REQUEST_BODY_BYTES (lib/http/payload-limits.ts; a test keeps them equal).
    description:
      'A device and some of its notes. A request body is at most 3,000,000 bytes (413 `PAYLOAD_TOO_LARGE` beyond) and holds at most 5,000 notes, ' +
      'so the desktop extractor sends a large device in several requests: each carries the same device fields (`deviceId`, `deviceType`, `systemId`, `appVersion`, `osDetails`) ' +
      'and the next notes in order, as many as keep its JSON within the limit (measured as sent, escapes included). The first request registers the device; ' +
      'notes already imported for the device and case (the same `id`) are skipped and counted in `skippedCount`, so a request that failed or timed out is sent again as it was. ' +
      'A note must fit one request on its own: its `htmlContent` (up to 1,000,000 characters) is then at most about 2.9 MB of JSON. ' +
      'Attachments are uploaded first (`POST /extraction/case/attachment-uploads`) and listed by the note that carries them, in whichever request it goes.',
  });

export const ImportNotesResponseEntity = z
  .object({
    message: z.string(),
    isSuccess: z.boolean(),
    deviceRegistrationId: z.optional(Id),
    importedCount: z.optional(z.number()),
    skippedCount: z.optional(z.number()),
  })
  .register(z.globalRegistry, { id: 'ImportNotesResponseEntity' });

/** An attachment the desktop extractor is about to upload: its file name, type and size. */
const UploadFile = z.object({
  name: z.string().check(z.trim(), z.minLength(1), z.maxLength(255)),
  contentType: z
    .string()
    .check(z.maxLength(100), z.regex(/^[\w.+-]+\/[\w.+-]+$/, 'Must be a media type such as image/jpeg')),
  size: z.int().check(z.minimum(1), z.maximum(5 * 1024 ** 3)),
});

export const CreateAttachmentUploadsDto = z
  .object({ files: z.array(UploadFile).check(z.minLength(1), z.maxLength(100)) })
  .register(z.globalRegistry, { id: 'CreateAttachmentUploadsDto' });

export const AttachmentUploadsResponseEntity = z
  .object({
    uploads: z.array(
      z.object({
        name: z.string(),
        /** The object key to send in a note's `attachments` once uploaded. */
        key: z.string(),
        method: z.literal('PUT'),
        url: z.string(),
        headers: UploadHeaders,
        expiresAt: DateTime,
      }),
    ),
  })
  .register(z.globalRegistry, { id: 'AttachmentUploadsResponseEntity' });

export const OrgReportQuery = z.object({
  ...PagingQuery,
  searchText: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(100))),
});

export const OrganizationActivityReportPageEntity = PageEntity(
  z.object({
    organization: OrganizationEntity,
    otherData: z.object({
      accountAgeInDays: z.number(),
      totalCases: z.number(),
      totalExtractionCodes: z.number(),
      unusedExtractionCodes: z.number(),
      totalUniqueDevices: z.number(),
      unusedExtractionCodesOnRecentCases: z.number(),
      extractionAttemptsByOutcome: z.object({ success: z.number(), failed: z.number(), cancelled: z.number() }),
      extractionAttemptsPerDevice: z.object({ average: z.number(), max: z.number() }),
    }),
  }),
).register(z.globalRegistry, { id: 'OrganizationActivityReportPageEntity' });
