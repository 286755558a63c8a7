import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import type { EnvironmentSettings } from '../environments';

/** The object bucket (report PDFs, evidence attachments) and its access-log bucket. Built in the stack's scope (see Network). */
export class ObjectStore {
  readonly bucket: Bucket;
  /** Named, so functions in other (nested) stacks get literal object ARNs for their prefixes. */
  readonly bucketName: string;

  constructor(
    private readonly stack: Stack,
    settings: EnvironmentSettings,
  ) {
    const dataRemoval = settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
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
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'objects/',
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
  }

  /** ARNs of the objects under each key prefix. */
  objectArns(prefixes: readonly string[]): string[] {
    return prefixes.map((prefix) =>
      this.stack.formatArn({
        service: 's3',
        region: '',
        account: '',
        resource: this.bucketName,
        resourceName: `${prefix}*`,
      }),
    );
  }
}
