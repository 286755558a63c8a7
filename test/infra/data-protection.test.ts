import type { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { type EnvironmentName, environments } from '../../infra/environments';
import { type SynthesizedResource, synthesizeForThisFile } from './synth';

/**
 * Issue 18, "Proxy name collision", "Retention" and "Evidence cannot be lost or altered", on the
 * synthesized templates of dev, staging and prod (one app, as two environments in one account
 * would be): unique physical names, what survives a stack deletion, Object Lock, AWS Backup.
 */

const ENVIRONMENTS: EnvironmentName[] = ['dev', 'staging', 'prod'];
const synthesized = synthesizeForThisFile(ENVIRONMENTS);

/** The environment's stacks as deployed: the stack, its nested route stacks, and the backup-copy stack (prod). */
function templatesOf(environment: EnvironmentName): Template[] {
  const copy = synthesized.app.node.tryFindChild(`CaseEvidence-${environment}-backup-copy`);
  return [...synthesized.templates(environment), ...(copy ? [Template.fromStack(copy as Stack)] : [])];
}

function resourcesOf(environment: EnvironmentName, type: string): Array<[string, SynthesizedResource]> {
  return templatesOf(environment).flatMap(
    (template) => Object.entries(template.findResources(type)) as Array<[string, SynthesizedResource]>,
  );
}

const only = <T>(list: T[]): T => {
  expect(list).toHaveLength(1);
  return list[0]!;
};

/**
 * Properties whose name looks like a physical name but is not one that must be unique in an
 * account and region: names inside the resource (database name, inline policy, proxy target
 * group), metric names, stage names, display names, AWS service names.
 */
const NOT_PHYSICAL_NAMES = new Set([
  'DBName',
  'DatabaseName',
  'MetricName',
  'StageName',
  'TargetGroupName',
  'CACertificateIdentifier',
  'ServiceName',
  'DisplayName',
  'PolicyName',
  'EngineName',
  // A reference to one of CodeDeploy's predefined configurations.
  'DeploymentConfigName',
]);
/** Names scoped to their parent resource, per resource type (a function's `live` alias). */
const SCOPED_NAMES: Record<string, string[]> = { 'AWS::Lambda::Alias': ['Name'] };
/** Physical names nested below the top level of Properties. */
const NESTED_NAMES: Record<string, string[][]> = { 'AWS::Backup::BackupPlan': [['BackupPlan', 'BackupPlanName']] };

/**
 * A name's value as CloudFormation will see it, with the account as `<account>` (two environments
 * may share one); undefined when it is derived from another resource (Ref / GetAtt), which makes it
 * as unique as that resource's own, generated or checked, name.
 */
function rendered(value: unknown, account: string): string | undefined {
  if (typeof value === 'string') return value.split(account).join('<account>');
  if (value && typeof value === 'object' && 'Ref' in value) {
    const ref = (value as { Ref: string }).Ref;
    return { 'AWS::AccountId': '<account>', 'AWS::Partition': 'aws', 'AWS::URLSuffix': 'amazonaws.com' }[ref];
  }
  if (value && typeof value === 'object' && 'Fn::Join' in value) {
    const [separator, parts] = (value as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
    const strings = parts.map((part) => rendered(part, account));
    return strings.some((part) => part === undefined) ? undefined : strings.join(separator);
  }
  return undefined;
}

/** Every literal physical name of the environment's resources, as `Type Property=value`. */
function physicalNames(environment: EnvironmentName): string[] {
  const account = environments[environment].account;
  const names: string[] = [];
  for (const template of templatesOf(environment)) {
    for (const resource of Object.values(template.toJSON().Resources ?? {}) as SynthesizedResource[]) {
      const properties = resource.Properties ?? {};
      const paths = [
        ...Object.keys(properties)
          .filter(
            (key) =>
              /(Name|Identifier|Identity)$/.test(key) &&
              !NOT_PHYSICAL_NAMES.has(key) &&
              !SCOPED_NAMES[resource.Type]?.includes(key),
          )
          .map((key) => [key]),
        ...(NESTED_NAMES[resource.Type] ?? []),
      ];
      for (const path of paths) {
        const value = rendered(
          path.reduce<any>((node, key) => node?.[key], properties),
          account,
        );
        if (value !== undefined) names.push(`${resource.Type} ${path.join('.')}=${value}`);
      }
    }
  }
  return names;
}

describe('physical names', () => {
  it('names the RDS Proxy after its environment', () => {
    for (const environment of ENVIRONMENTS) {
      const [, proxy] = only(resourcesOf(environment, 'AWS::RDS::DBProxy'));
      expect(proxy.Properties.DBProxyName).toBe(`case-evidence-${environment}`);
    }
  });

  it('gives no two environments the same physical name, so any two deploy side by side in one account', () => {
    const byEnvironment = Object.fromEntries(ENVIRONMENTS.map((name) => [name, physicalNames(name)]));
    // The collector sees the names that matter (a regression here would make the check below vacuous).
    expect(byEnvironment.prod).toEqual(
      expect.arrayContaining([
        'AWS::RDS::DBProxy DBProxyName=case-evidence-prod',
        'AWS::RDS::DBInstance DBInstanceIdentifier=case-evidence-prod',
        'AWS::S3::Bucket BucketName=case-evidence-prod-objects-<account>-us-east-1',
        'AWS::S3::Bucket BucketName=case-evidence-prod-work-<account>-us-east-1',
        'AWS::Logs::LogGroup LogGroupName=/aws/rds/instance/case-evidence-prod/postgresql',
        'AWS::Backup::BackupVault BackupVaultName=case-evidence-prod',
        'AWS::Backup::BackupVault BackupVaultName=case-evidence-prod-copy',
        'AWS::Backup::BackupPlan BackupPlan.BackupPlanName=case-evidence-prod',
        'AWS::SES::EmailIdentity EmailIdentity=case-evidence.example',
      ]),
    );
    for (const [index, a] of ENVIRONMENTS.entries()) {
      // Within one environment each name is used once, too.
      expect(
        byEnvironment[a]!.filter((name, at) => byEnvironment[a]!.indexOf(name) !== at),
        a,
      ).toEqual([]);
      for (const b of ENVIRONMENTS.slice(index + 1))
        expect(
          byEnvironment[a]!.filter((name) => byEnvironment[b]!.includes(name)),
          `${a} and ${b}`,
        ).toEqual([]);
    }
  });
});

describe('retention', () => {
  /** Resource types whose every resource holds data (or opens it) and must outlive the stack in prod. */
  const DATA_TYPES = [
    'AWS::SecretsManager::Secret',
    'AWS::RDS::DBInstance',
    'AWS::S3::Bucket',
    'AWS::Logs::LogGroup',
    'AWS::Backup::BackupVault',
  ];

  it('keeps every secret, the database, the buckets, the log groups and the vaults in prod, on deletion and on replacement', () => {
    for (const type of DATA_TYPES) {
      const resources = resourcesOf('prod', type);
      expect(resources.length, type).toBeGreaterThan(0);
      for (const [id, resource] of resources) {
        expect(['Retain', 'RetainExceptOnCreate'], `${type} ${id}`).toContain(resource.DeletionPolicy);
        expect(resource.UpdateReplacePolicy, `${type} ${id}`).toBe('Retain');
      }
    }
    // Today's gap: the admin login RDS generates (the database is kept, so is its login).
    expect(resourcesOf('prod', 'AWS::SecretsManager::Secret').map(([id]) => id)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^CaseEvidenceprodDatabaseSecret/)]),
    );
  });

  it('uses RetainExceptOnCreate for the named and data resources of prod, so a failed first create rolls back cleanly and can be retried', () => {
    const types = [
      ...DATA_TYPES.filter((type) => type !== 'AWS::Logs::LogGroup'),
      'AWS::RDS::DBSubnetGroup',
      'AWS::KMS::Key',
    ];
    for (const type of types)
      for (const [id, resource] of resourcesOf('prod', type)) {
        // The alarm topic's key belongs to the alarms, not to the data.
        if (type === 'AWS::KMS::Key' && !/Vault/.test(id)) continue;
        expect(resource.DeletionPolicy, `${type} ${id}`).toBe('RetainExceptOnCreate');
      }
    const logGroups = Object.fromEntries(resourcesOf('prod', 'AWS::Logs::LogGroup'));
    const named = Object.entries(logGroups).filter(([, group]) => group.Properties.LogGroupName !== undefined);
    expect(named.length).toBeGreaterThan(0);
    for (const [id, group] of named) expect(group.DeletionPolicy, id).toBe('RetainExceptOnCreate');
    expect(Object.keys(logGroups).find((id) => id.startsWith('FlowLogs'))).toBeDefined();
    for (const [id, group] of Object.entries(logGroups))
      if (id.startsWith('FlowLogs')) expect(group.DeletionPolicy).toBe('RetainExceptOnCreate');
  });

  it('removes them with the stack in dev (cdk destroy leaves nothing of a test environment)', () => {
    for (const type of [...DATA_TYPES, 'AWS::RDS::DBSubnetGroup'])
      for (const [id, resource] of resourcesOf('dev', type)) {
        expect(resource.DeletionPolicy, `${type} ${id}`).toBe('Delete');
        expect(resource.UpdateReplacePolicy, `${type} ${id}`).toBe('Delete');
      }
  });
});

describe('evidence cannot be lost or altered', () => {
  const objectBucket = (environment: EnvironmentName) =>
    only(
      resourcesOf(environment, 'AWS::S3::Bucket').filter(
        ([, bucket]) =>
          typeof bucket.Properties.BucketName === 'string' && /-objects-/.test(bucket.Properties.BucketName),
      ),
    )[1];

  it('puts the object bucket under Object Lock: governance in dev and staging, compliance in prod, retention from config, versioning kept', () => {
    for (const environment of ENVIRONMENTS) {
      const { objectLock } = environments[environment];
      const bucket = objectBucket(environment);
      expect(objectLock.mode).toBe(environment === 'prod' ? 'COMPLIANCE' : 'GOVERNANCE');
      expect(bucket.Properties).toMatchObject({
        ObjectLockEnabled: true,
        ObjectLockConfiguration: {
          ObjectLockEnabled: 'Enabled',
          Rule: { DefaultRetention: { Mode: objectLock.mode, Days: objectLock.retentionDays } },
        },
        VersioningConfiguration: { Status: 'Enabled' },
      });
      // Lifecycle rules only abort stale multipart uploads and expire noncurrent versions (which
      // S3 does not do while a version is under retention): nothing expires current evidence.
      for (const rule of bucket.Properties.LifecycleConfiguration.Rules) {
        expect(rule.Status).toBe('Enabled');
        expect(rule.ExpirationInDays).toBeUndefined();
        expect(rule.ExpirationDate).toBeUndefined();
      }
    }
  });

  it('backs the database and the object bucket up daily into a locked, KMS-encrypted vault kept backup.retentionDays', () => {
    for (const environment of ENVIRONMENTS) {
      const settings = environments[environment];
      const stackTemplate = synthesized.templates(environment)[0]!;
      const resources = stackTemplate.toJSON().Resources;
      const [vaultId, vault] = only(Object.entries(stackTemplate.findResources('AWS::Backup::BackupVault')));
      expect(vault.Properties.BackupVaultName).toBe(`case-evidence-${environment}`);
      // A key of the vault's own, rotated.
      const keyId = vault.Properties.EncryptionKeyArn['Fn::GetAtt'][0];
      expect(resources[keyId]).toMatchObject({ Type: 'AWS::KMS::Key', Properties: { EnableKeyRotation: true } });
      // Governance-style lock (removable by an administrator) outside prod; a compliance lock,
      // immutable 3 days after the first deployment, in prod.
      expect(vault.Properties.LockConfiguration).toEqual({
        MinRetentionDays: settings.backup.retentionDays,
        ...(environment === 'prod' ? { ChangeableForDays: 3 } : {}),
      });

      const [, plan] = only(Object.entries(stackTemplate.findResources('AWS::Backup::BackupPlan')));
      const rule = only(plan.Properties.BackupPlan.BackupPlanRule as any[]);
      expect(rule).toMatchObject({
        ScheduleExpression: 'cron(0 5 * * ? *)',
        Lifecycle: { DeleteAfterDays: settings.backup.retentionDays },
        TargetBackupVault: { 'Fn::GetAtt': [vaultId, 'BackupVaultName'] },
      });
      // A recovery point kept shorter than the lock's minimum would be refused by the vault.
      expect(rule.Lifecycle.DeleteAfterDays).toBeGreaterThanOrEqual(
        vault.Properties.LockConfiguration.MinRetentionDays,
      );

      const [, selection] = only(Object.entries(stackTemplate.findResources('AWS::Backup::BackupSelection')));
      const databaseId = only(Object.keys(stackTemplate.findResources('AWS::RDS::DBInstance')));
      const bucketId = only(
        Object.entries(stackTemplate.findResources('AWS::S3::Bucket'))
          .filter(([, bucket]) => bucket.Properties.ObjectLockEnabled)
          .map(([id]) => id),
      );
      expect(selection.Properties.BackupSelection.Resources).toEqual([
        { 'Fn::Join': ['', [`arn:aws:rds:${settings.region}:${settings.account}:db:`, { Ref: databaseId }]] },
        { 'Fn::GetAtt': [bucketId, 'Arn'] },
      ]);
      // Its role: AWS Backup's policies, including the pair S3 backups need (and restores).
      const roleId = selection.Properties.BackupSelection.IamRoleArn['Fn::GetAtt'][0];
      const role = resources[roleId];
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        expect.objectContaining({ Principal: { Service: 'backup.amazonaws.com' }, Action: 'sts:AssumeRole' }),
      ]);
      for (const name of [
        'service-role/AWSBackupServiceRolePolicyForBackup',
        'service-role/AWSBackupServiceRolePolicyForRestores',
        'AWSBackupServiceRolePolicyForS3Backup',
        'AWSBackupServiceRolePolicyForS3Restore',
      ])
        expect(JSON.stringify(role.Properties.ManagedPolicyArns)).toContain(`:iam::aws:policy/${name}"`);
      // The bucket can be backed up: AWS Backup for S3 needs versioning.
      expect(resources[bucketId].Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    }
  });

  it('copies every recovery point of prod into a locked vault of a stack in the copy region, deployed first; no copy elsewhere', () => {
    const settings = environments.prod;
    const copyStack = synthesized.app.node.findChild('CaseEvidence-prod-backup-copy') as Stack;
    expect(copyStack.region).toBe(settings.backup.copyToRegion);
    expect(copyStack.region).not.toBe(synthesized.stacks.prod.region);
    expect(copyStack.account).toBe(settings.account);
    expect(copyStack.terminationProtection).toBe(true);
    // The main stack depends on it: `cdk deploy` creates the copy vault first.
    expect(synthesized.stacks.prod.dependencies).toContain(copyStack);

    const copyTemplate = Template.fromStack(copyStack);
    const [, copyVault] = only(Object.entries(copyTemplate.findResources('AWS::Backup::BackupVault')));
    expect(copyVault.Properties).toMatchObject({
      BackupVaultName: 'case-evidence-prod-copy',
      LockConfiguration: { MinRetentionDays: settings.backup.retentionDays, ChangeableForDays: 3 },
    });
    copyTemplate.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });

    const [, plan] = only(resourcesOf('prod', 'AWS::Backup::BackupPlan'));
    expect(plan.Properties.BackupPlan.BackupPlanRule[0].CopyActions).toEqual([
      {
        DestinationBackupVaultArn: `arn:aws:backup:${settings.backup.copyToRegion}:${settings.account}:backup-vault:case-evidence-prod-copy`,
        Lifecycle: { DeleteAfterDays: settings.backup.retentionDays },
      },
    ]);
    for (const environment of ['dev', 'staging'] as const) {
      expect(synthesized.app.node.tryFindChild(`CaseEvidence-${environment}-backup-copy`)).toBeUndefined();
      const [, other] = only(resourcesOf(environment, 'AWS::Backup::BackupPlan'));
      expect(other.Properties.BackupPlan.BackupPlanRule[0].CopyActions).toBeUndefined();
    }
  });
});
