import { Duration, type Stack } from 'aws-cdk-lib';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  HttpMethods,
  ObjectLockRetention,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import {
  ANSWER_PREFIX,
  GENERATED_PREFIX,
  isWorkBucketKey,
  STAGING_EXPIRATION_DAYS,
  STAGING_PREFIX,
} from '../../lib/storage';
import type { EnvironmentSettings } from '../environments';
import { dataRemovalPolicy } from './retention';

/**
 * Days the parts of an unfinished multipart upload are kept: a dropped upload is resumed within
 * the day (S3 counts from the upload's start, not its last part).
 */
export const INCOMPLETE_UPLOAD_DAYS = 1;
/** Days a generated document (`generated/...`) is kept: the service reuses one for 7 days, and its last link must still work. */
export const GENERATED_EXPIRATION_DAYS = 8;
/**
 * Days a stored large answer (`answers/...`, lib/storage/answers.ts) is kept: its link lasts
 * minutes, and a day is the shortest expiration S3 takes.
 */
export const ANSWER_EXPIRATION_DAYS = 1;

/**
 * The evidence bucket (`objects`: evidence attachments and imported files), the work bucket
 * (`work`: staging uploads and generated documents) and their access-log bucket. Built in the
 * stack's scope (see Network).
 *
 * Evidence cannot be altered or lost: the evidence bucket is versioned (an overwrite keeps the
 * previous version) and under S3 Object Lock with a default retention (`objectLock` of the environment:
 * GOVERNANCE in dev and staging, COMPLIANCE in prod), so no version can be deleted or overwritten
 * in place before its retention ends, in prod not even by the account root. Every write must then
 * carry Content-MD5 or an x-amz checksum (lib/storage sends CRC32 on its own writes; clients add
 * Content-MD5 to presigned uploads). No upload link points into it: links put files into the work
 * bucket's `staging/`, and the service copies the verified bytes into evidence.
 */
export class ObjectStore {
  /** The evidence bucket. */
  readonly bucket: Bucket;
  /** Named, so functions in other (nested) stacks get literal object ARNs for their prefixes. */
  readonly bucketName: string;
  readonly workBucket: Bucket;
  readonly workBucketName: string;

  constructor(
    private readonly stack: Stack,
    settings: EnvironmentSettings,
  ) {
    const dataRemoval = dataRemovalPolicy(settings);
    const accessLogs = new Bucket(stack, 'AccessLogs', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ expiration: Duration.days(settings.retainData ? 365 : 30) }],
      removalPolicy: dataRemoval,
    });
    this.bucketName = `case-evidence-${settings.name}-objects-${stack.account}-${stack.region}`;
    this.bucket = new Bucket(stack, 'Objects', {
      bucketName: this.bucketName,
      // SSE-KMS with the AWS managed key (lib/storage writes with ServerSideEncryption aws:kms).
      encryption: BucketEncryption.KMS_MANAGED,
      bucketKeyEnabled: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      versioned: true,
      objectLockEnabled: true,
      objectLockDefaultRetention:
        settings.objectLock.mode === 'COMPLIANCE'
          ? ObjectLockRetention.compliance(Duration.days(settings.objectLock.retentionDays))
          : ObjectLockRetention.governance(Duration.days(settings.objectLock.retentionDays)),
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'objects/',
      // Lifecycle rules never remove a version under Object Lock retention: a noncurrent version
      // expires at the later of these days and the end of its retention (in prod 7 years).
      lifecycleRules: [
        { abortIncompleteMultipartUploadAfter: Duration.days(7) },
        { noncurrentVersionExpiration: Duration.days(settings.retainData ? 365 : 30) },
      ],
      // Presigned downloads and uploads from the web app.
      cors: [
        {
          allowedMethods: [HttpMethods.GET, HttpMethods.PUT],
          allowedOrigins: settings.corsOrigins,
          allowedHeaders: ['*'],
          maxAge: 3600,
        },
      ],
      removalPolicy: dataRemoval,
    });
    // Object Lock's default retention covers every object of its bucket: what must expire (uploads
    // waiting to be verified and copied into evidence, generated documents) lives here, where
    // lifecycle rules and deletes remove it. Unversioned, so they remove the bytes themselves.
    this.workBucketName = `case-evidence-${settings.name}-work-${stack.account}-${stack.region}`;
    this.workBucket = new Bucket(stack, 'Work', {
      bucketName: this.workBucketName,
      encryption: BucketEncryption.KMS_MANAGED,
      bucketKeyEnabled: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'work/',
      lifecycleRules: [
        { prefix: STAGING_PREFIX, expiration: Duration.days(STAGING_EXPIRATION_DAYS) },
        { prefix: GENERATED_PREFIX, expiration: Duration.days(GENERATED_EXPIRATION_DAYS) },
        { prefix: ANSWER_PREFIX, expiration: Duration.days(ANSWER_EXPIRATION_DAYS) },
        { abortIncompleteMultipartUploadAfter: Duration.days(INCOMPLETE_UPLOAD_DAYS) },
      ],
      // Presigned uploads from the web app, and downloads of generated documents; and any origin
      // may read what a signed link gives: a browser following the API's 303 to a stored answer
      // from another origin sends `Origin: null` (the link, not the origin, is what grants access).
      cors: [
        {
          allowedMethods: [HttpMethods.GET, HttpMethods.PUT],
          allowedOrigins: settings.corsOrigins,
          allowedHeaders: ['*'],
          maxAge: 3600,
        },
        { allowedMethods: [HttpMethods.GET], allowedOrigins: ['*'], maxAge: 3600 },
      ],
      removalPolicy: dataRemoval,
    });
  }

  /**
   * ARNs of the objects under each key prefix, each in the bucket lib/storage sends its keys to
   * (isWorkBucketKey: `staging/` and `generated/` in the work bucket, the rest in the evidence bucket).
   */
  objectArns(prefixes: readonly string[]): string[] {
    return prefixes.map((prefix) =>
      this.stack.formatArn({
        service: 's3',
        region: '',
        account: '',
        resource: isWorkBucketKey(prefix) ? this.workBucketName : this.bucketName,
        resourceName: `${prefix}*`,
      }),
    );
  }
}
