import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { type EnvironmentName, environments } from '../../infra/environments';
import { STORAGE_SOURCES } from '../../infra/permissions';
import type { CaseEvidenceStack } from '../../infra/stack';
import { IMPORT_WAIT_ALERT_DAYS } from '../../lib/material/imports/staging-watch';
import { LAPSED_UPLOAD_GRACE_SECONDS } from '../../lib/material/lapsed-uploads';
import { UPLOAD_LINK_SECONDS } from '../../lib/material/uploads';
import { STAGING_EXPIRATION_DAYS } from '../../lib/storage';
import { resourcesOfFunction, synthesizeForThisFile } from './synth';

/**
 * Issue 29, the staging/evidence split in the cloud: staging uploads and generated documents live
 * in a work bucket of their own, without the evidence bucket's Object Lock (a default retention of
 * the whole bucket, which would keep them for good), and expire there; each function gets its
 * prefixes on the right bucket only.
 */

const ENVIRONMENTS: EnvironmentName[] = ['dev', 'prod'];
const ROUTES = [
  'createImport',
  'startImport',
  'retryImport',
  'cancelImport',
  'signImportParts',
  'listImportParts',
  'createAttachmentUploads',
  'importCaseNotes',
  'getCaseCustody',
  'startCustodyExport',
  'getCustodyExport',
  'createBillingReport',
];
const synthesized = synthesizeForThisFile(ENVIRONMENTS, ROUTES);

const resourceOf = (stack: CaseEvidenceStack, construct: { node: { defaultChild?: unknown } }) => {
  const id = stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const [parent] = synthesized.templates(stack.settings.name);
  return { id, resource: parent!.toJSON().Resources[id] };
};

const bucketNames = (environment: EnvironmentName) => {
  const { account, region } = environments[environment];
  return {
    evidence: `case-evidence-${environment}-objects-${account}-${region}`,
    work: `case-evidence-${environment}-work-${account}-${region}`,
  };
};

/** The role's S3 grants: action -> object ARNs, sorted (however the statements group them). */
function s3Grants(role: { Properties: { Policies?: Array<{ PolicyDocument: { Statement: any[] } }> } }) {
  const grants: Record<string, string[]> = {};
  for (const statement of (role.Properties.Policies ?? []).flatMap((policy) => policy.PolicyDocument.Statement))
    for (const action of [statement.Action].flat() as string[])
      if (action.startsWith('s3:')) grants[action] = [...(grants[action] ?? []), ...[statement.Resource].flat()].sort();
  return grants;
}

describe('the work bucket', () => {
  it('holds staging uploads and generated documents: no Object Lock, no versions, SSE-KMS, private, TLS only, CORS for browser uploads', () => {
    for (const environment of ENVIRONMENTS) {
      const stack = synthesized.stacks[environment];
      const settings = environments[environment];
      const { id, resource: bucket } = resourceOf(stack, stack.workBucket);
      const [parent] = synthesized.templates(environment);

      expect(bucket.Properties.BucketName).toBe(bucketNames(environment).work);
      expect(bucket.Properties.ObjectLockEnabled).toBeUndefined();
      expect(bucket.Properties.ObjectLockConfiguration).toBeUndefined();
      // Unversioned: an expiration or a delete removes the bytes, not just the current version.
      expect(bucket.Properties.VersioningConfiguration).toBeUndefined();
      expect(bucket.Properties.BucketEncryption).toEqual({
        ServerSideEncryptionConfiguration: [
          { ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms' }, BucketKeyEnabled: true },
        ],
      });
      expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(bucket.Properties.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
      // Presigned uploads from the web app, and downloads of generated documents; stored large
      // answers reached by a cross-origin 303 (Origin: null) from any origin.
      expect(bucket.Properties.CorsConfiguration).toEqual({
        CorsRules: [
          { AllowedMethods: ['GET', 'PUT'], AllowedOrigins: settings.corsOrigins, AllowedHeaders: ['*'], MaxAge: 3600 },
          { AllowedMethods: ['GET'], AllowedOrigins: ['*'], MaxAge: 3600 },
        ],
      });
      expect(bucket.Properties.LoggingConfiguration).toMatchObject({ LogFilePrefix: 'work/' });
      // Named and kept in prod like the evidence bucket (infra/constructs/retention.ts).
      expect(bucket.DeletionPolicy).toBe(settings.retainData ? 'RetainExceptOnCreate' : 'Delete');
      expect(bucket.UpdateReplacePolicy).toBe(settings.retainData ? 'Retain' : 'Delete');
      const policy = Object.values(parent!.findResources('AWS::S3::BucketPolicy')).find(
        (candidate: any) => candidate.Properties.Bucket.Ref === id,
      ) as any;
      expect(policy.Properties.PolicyDocument.Statement).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          expect.objectContaining({ Effect: 'Deny', Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } } }),
        ]),
      );
    }
  });

  it('expires staging uploads after 30 days, generated documents after 8, large answers and incomplete multipart uploads after 1', () => {
    for (const environment of ENVIRONMENTS) {
      const stack = synthesized.stacks[environment];
      const { resource: bucket } = resourceOf(stack, stack.workBucket);
      const rules = bucket.Properties.LifecycleConfiguration.Rules;
      expect(rules).toHaveLength(4);
      expect(rules).toEqual(
        expect.arrayContaining([
          { Prefix: 'staging/', ExpirationInDays: 30, Status: 'Enabled' },
          { Prefix: 'generated/', ExpirationInDays: 8, Status: 'Enabled' },
          { Prefix: 'answers/', ExpirationInDays: 1, Status: 'Enabled' },
          { AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' },
        ]),
      );
    }
  });

  it('keeps a staged upload a week past the wait maintenance reports, and longer than any link and its grace', () => {
    // The service removes what it knows of; the rule must not take an upload an import waits for.
    expect(STAGING_EXPIRATION_DAYS).toBeGreaterThanOrEqual(IMPORT_WAIT_ALERT_DAYS + 7);
    expect(STAGING_EXPIRATION_DAYS * 86_400).toBeGreaterThan(
      UPLOAD_LINK_SECONDS + LAPSED_UPLOAD_GRACE_SECONDS + 86_400 /* S3 rounds to the next midnight */,
    );
  });

  it('leaves the evidence bucket as it was: Object Lock, versions, its lifecycle rules, its CORS', () => {
    for (const environment of ENVIRONMENTS) {
      const stack = synthesized.stacks[environment];
      const settings = environments[environment];
      const { resource: bucket } = resourceOf(stack, stack.bucket);
      expect(bucket.Properties).toMatchObject({
        BucketName: bucketNames(environment).evidence,
        ObjectLockEnabled: true,
        ObjectLockConfiguration: {
          ObjectLockEnabled: 'Enabled',
          Rule: { DefaultRetention: { Mode: settings.objectLock.mode, Days: settings.objectLock.retentionDays } },
        },
        VersioningConfiguration: { Status: 'Enabled' },
        LifecycleConfiguration: {
          Rules: [
            { AbortIncompleteMultipartUpload: { DaysAfterInitiation: 7 }, Status: 'Enabled' },
            {
              NoncurrentVersionExpiration: { NoncurrentDays: settings.retainData ? 365 : 30 },
              Status: 'Enabled',
            },
          ],
        },
        CorsConfiguration: {
          CorsRules: [
            {
              AllowedMethods: ['GET', 'PUT'],
              AllowedOrigins: settings.corsOrigins,
              AllowedHeaders: ['*'],
              MaxAge: 3600,
            },
          ],
        },
        LoggingConfiguration: { LogFilePrefix: 'objects/' },
      });
    }
  });
});

describe('object permissions per function', () => {
  const { evidence, work } = bucketNames('dev');
  const evidenceObjects = (prefix: string) => `arn:aws:s3:::${evidence}/${prefix}*`;
  const workObjects = (prefix: string) => `arn:aws:s3:::${work}/${prefix}*`;

  /** What each function may do, and where (one bucket or the other, by prefix); routes also get ANSWERS. */
  const EXPECTED: Record<string, Record<string, string[]>> = {
    // Upload links: presigned PUTs under staging/, nothing in the evidence bucket.
    createImport: { 's3:PutObject': [workObjects('staging/')] },
    createAttachmentUploads: { 's3:PutObject': [workObjects('staging/')] },
    // Parts of a multipart upload: presigned UploadParts (PutObject), listed.
    signImportParts: { 's3:PutObject': [workObjects('staging/')] },
    listImportParts: { 's3:ListMultipartUploadParts': [workObjects('staging/')] },
    // The upload's size (HeadObject); one in parts listed and completed (PutObject).
    startImport: {
      's3:GetObject': [workObjects('staging/')],
      's3:PutObject': [workObjects('staging/')],
      's3:ListMultipartUploadParts': [workObjects('staging/')],
    },
    // Removes the staged upload; aborts one in parts, and the worker's copy into evidence paused midway.
    cancelImport: {
      's3:DeleteObject': [workObjects('staging/')],
      's3:AbortMultipartUpload': [evidenceObjects('cases/'), workObjects('staging/')],
    },
    retryImport: {},
    // Copies attachments out of staging into the case's evidence, then removes them from staging.
    importCaseNotes: {
      's3:GetObject': [workObjects('staging/')],
      's3:PutObject': [evidenceObjects('cases/')],
      's3:DeleteObject': [workObjects('staging/')],
    },
    // Copies the upload into evidence (UploadPartCopy: GetObject on the source, PutObject on the
    // target), reads that copy pinned to its version, stores extracted attachments.
    // It also runs custody exports: their PDF volumes are generated documents.
    importWorker: {
      's3:GetObject': [evidenceObjects('cases/'), workObjects('generated/'), workObjects('staging/')],
      's3:GetObjectVersion': [evidenceObjects('cases/')],
      's3:PutObject': [evidenceObjects('cases/'), workObjects('generated/')],
      's3:DeleteObject': [workObjects('staging/')],
      's3:AbortMultipartUpload': [evidenceObjects('cases/')],
    },
    // Generated documents: written, reused and linked under generated/.
    getCaseCustody: {
      's3:GetObject': [workObjects('generated/')],
      's3:PutObject': [workObjects('generated/')],
    },
    // The export's read presigns a GET for each volume; its start touches no object.
    getCustodyExport: {
      's3:GetObject': [workObjects('generated/')],
    },
    createBillingReport: {
      's3:GetObject': [workObjects('generated/')],
      's3:PutObject': [workObjects('generated/')],
    },
    // Removes unstarted uploads and expired documents.
    maintenance: {
      's3:DeleteObject': [workObjects('generated/'), workObjects('staging/')],
      's3:AbortMultipartUpload': [workObjects('staging/')],
    },
  };

  /** Every route stores an answer over Lambda's payload limit under answers/ and presigns its link. */
  const withAnswers = (name: string, grants: Record<string, string[]>) => {
    if (name === 'importWorker' || name === 'maintenance') return grants;
    const add = (action: string) => [...(grants[action] ?? []), workObjects('answers/')].sort();
    return { ...grants, 's3:GetObject': add('s3:GetObject'), 's3:PutObject': add('s3:PutObject') };
  };

  it.each(Object.keys(EXPECTED))('%s gets its prefixes on the right bucket, nothing else', (name) => {
    const stack = synthesized.stacks.dev;
    const deployed = stack.functions.find((candidate) => candidate.name === name);
    if (!deployed) throw new Error(`no function ${name}`);
    const { fn, role } = resourcesOfFunction(deployed);
    expect(s3Grants(role)).toEqual(withAnswers(name, EXPECTED[name]!));
    const variables = fn.Properties.Environment.Variables;
    if (Object.keys(withAnswers(name, EXPECTED[name]!)).length > 0) {
      // Every storage function learns both buckets: lib/storage picks the bucket by the key.
      expect(variables.STORAGE_BUCKET).toBe(evidence);
      expect(variables.WORK_BUCKET).toBe(work);
    } else {
      expect(variables.STORAGE_BUCKET).toBeUndefined();
      expect(variables.WORK_BUCKET).toBeUndefined();
    }
  });

  it('grants nothing under staging/, generated/ or answers/ in the evidence bucket, nothing else in the work bucket, and no delete in the evidence bucket', () => {
    for (const environment of ENVIRONMENTS) {
      const names = bucketNames(environment);
      for (const deployed of synthesized.stacks[environment].functions) {
        const grants = s3Grants(resourcesOfFunction(deployed).role);
        for (const [action, resources] of Object.entries(grants))
          for (const resource of resources) {
            const [bucket, ...key] = resource.replace('arn:aws:s3:::', '').split('/');
            const prefix = key.join('/');
            const inWork = ['staging/', 'generated/', 'answers/'].some((work) => prefix.startsWith(work));
            expect(bucket, `${deployed.name} ${action} ${resource}`).toBe(inWork ? names.work : names.evidence);
            if (bucket === names.evidence) expect(action, deployed.name).not.toBe('s3:DeleteObject');
          }
      }
    }
  });
});

describe('which bundles keep objects', () => {
  it('names every module that imports lib/storage in STORAGE_SOURCES (but the large-answer mechanism)', () => {
    const importers = (directory: string): string[] =>
      readdirSync(directory, { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => join(directory, file))
        .filter((file) => /from '(\.\.?\/)+(lib\/)?storage(\/[a-z-]+)?'/.test(readFileSync(file, 'utf8')));
    const modules = [...importers('lib'), ...importers('functions')].filter(
      (file) =>
        !file.startsWith('lib/storage/') && file !== 'lib/http/large-answers.ts' && file !== 'lib/db/schema/index.ts',
    );
    expect(modules.length).toBeGreaterThan(5);
    for (const file of modules)
      expect(
        STORAGE_SOURCES.some((source) => file.startsWith(source)),
        `${file} imports lib/storage: name it in STORAGE_SOURCES (infra/permissions.ts)`,
      ).toBe(true);
  });
});
