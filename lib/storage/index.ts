// Object storage: the interface (object-storage.ts), its two stores (s3-storage.ts in the cloud,
// directory-storage.ts locally), the key layout both share (keys.ts), and the configured one.
export { objectStorage, useObjectStorage } from './configured-storage';
export { DirectoryStorage, type SignedWriteOutcome } from './directory-storage';
export {
  ANSWER_PREFIX,
  casePrefix,
  caseStagingPrefix,
  GENERATED_PREFIX,
  isSafeObjectKey,
  isWorkBucketKey,
  STAGING_EXPIRATION_DAYS,
  STAGING_PREFIX,
  stagingKeyOf,
  WORK_BUCKET_PREFIXES,
} from './keys';
export {
  MAX_PART_BYTES,
  MAX_PARTS,
  MAX_UPLOAD_LINK_BYTES,
  NoSuchUploadError,
  type ObjectStat,
  type ObjectStorage,
  type OpenedObject,
  type PartSpec,
  type PutOptions,
  type ReadOptions,
  type StoredVersion,
  type UploadedPart,
} from './object-storage';
export { type S3Buckets, S3Storage } from './s3-storage';
