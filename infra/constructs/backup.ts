import { ArnFormat, Duration, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import {
  BackupPlan,
  BackupPlanRule,
  BackupResource,
  BackupVault,
  type IBackupVault,
  type LockConfiguration,
} from 'aws-cdk-lib/aws-backup';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import type { EnvironmentSettings } from '../environments';
import { acknowledge } from '../nag';
import type { Database } from './database';
import type { ObjectStore } from './object-store';
import { dataRemovalPolicy } from './retention';

/** What the backup role holds: AWS Backup's policies for backing up and restoring RDS and S3 (S3 has its own pair). */
const BACKUP_ROLE_POLICIES = [
  'service-role/AWSBackupServiceRolePolicyForBackup',
  'service-role/AWSBackupServiceRolePolicyForRestores',
  'AWSBackupServiceRolePolicyForS3Backup',
  'AWSBackupServiceRolePolicyForS3Restore',
];

/** Name of the environment's vault; the copy region's vault adds `-copy`. */
export const backupVaultName = (settings: EnvironmentSettings) => `case-evidence-${settings.name}`;
export const copyVaultName = (settings: EnvironmentSettings) => `${backupVaultName(settings)}-copy`;

/**
 * Vault Lock: no recovery point leaves the vault before `backup.retentionDays` (a job with a
 * shorter retention is refused). Where the evidence bucket is under COMPLIANCE Object Lock (prod)
 * the vault lock is a compliance lock too: it can be changed or removed for 3 days after the first
 * deployment, then never, by nobody. Elsewhere it is a governance lock without a lock date: an
 * administrator can remove it (tear-down of dev and staging).
 */
function vaultLock(settings: EnvironmentSettings): LockConfiguration {
  return {
    minRetention: Duration.days(settings.backup.retentionDays),
    ...(settings.objectLock.mode === 'COMPLIANCE' ? { changeableFor: Duration.days(3) } : {}),
  };
}

/** A locked backup vault encrypted with a key of its own (rotated yearly). */
function lockedVault(scope: Construct, settings: EnvironmentSettings, name: string, purpose: string): BackupVault {
  const removalPolicy = dataRemovalPolicy(settings);
  const key = new Key(scope, 'VaultKey', {
    description: `Encrypts the recovery points of the backup vault ${name} (${purpose})`,
    enableKeyRotation: true,
    removalPolicy,
  });
  return new BackupVault(scope, 'Vault', {
    backupVaultName: name,
    encryptionKey: key,
    lockConfiguration: vaultLock(settings),
    removalPolicy,
  });
}

/**
 * AWS Backup of the data that cannot be rebuilt: a daily recovery point of the database and of the
 * object bucket (needs versioning, which the bucket has), kept `backup.retentionDays` in a locked
 * vault, and in prod copied to the vault of `backup.copyToRegion`. That vault lives in a stack of
 * its own in that region (BackupCopyStack, `<stack>-backup-copy`), which this stack depends on, so
 * `cdk deploy` creates it first.
 */
export class Backup extends Construct {
  readonly vault: BackupVault;
  readonly plan: BackupPlan;
  readonly role: Role;
  /** The stack of the copy region's vault (prod). */
  readonly copyStack?: BackupCopyStack;

  constructor(
    scope: Construct,
    id: string,
    props: { settings: EnvironmentSettings; database: Database; objectStore: ObjectStore },
  ) {
    super(scope, id);
    const { settings, database, objectStore } = props;
    const stack = Stack.of(this);
    const retention = Duration.days(settings.backup.retentionDays);
    this.vault = lockedVault(this, settings, backupVaultName(settings), `${settings.name}, ${stack.region}`);

    let copyVault: IBackupVault | undefined;
    const copyRegion = settings.backup.copyToRegion;
    if (copyRegion) {
      if (copyRegion === stack.region)
        throw new Error(`backup.copyToRegion of ${settings.name} is the stack's own region`);
      // A sibling of the stack in the app (same account, the copy region). Referenced by its ARN,
      // which its fixed name makes known at synth: a cross-region reference would need a custom resource.
      this.copyStack = new BackupCopyStack(stack.node.scope as Construct, `${stack.node.id}-backup-copy`, {
        settings,
        env: { account: stack.account, region: copyRegion },
        description: `Case Evidence and Billing Service (${settings.name}): backup copies in ${copyRegion}`,
        terminationProtection: settings.retainData,
      });
      stack.addStackDependency(this.copyStack, 'The backup plan copies into the vault of the copy region');
      copyVault = BackupVault.fromBackupVaultArn(
        this,
        'CopyVault',
        stack.formatArn({
          service: 'backup',
          region: copyRegion,
          resource: 'backup-vault',
          resourceName: copyVaultName(settings),
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      );
    }

    this.plan = new BackupPlan(this, 'Plan', {
      backupPlanName: backupVaultName(settings),
      backupVault: this.vault,
      backupPlanRules: [
        new BackupPlanRule({
          ruleName: 'Daily',
          // 05:00 UTC, outside business hours in the Americas; AWS Backup starts within 8 hours.
          scheduleExpression: Schedule.cron({ minute: '0', hour: '5' }),
          deleteAfter: retention,
          ...(copyVault ? { copyActions: [{ destinationBackupVault: copyVault, deleteAfter: retention }] } : {}),
        }),
      ],
    });

    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('backup.amazonaws.com'),
      description: `AWS Backup of the ${settings.name} database and object bucket (backup, copy and restore)`,
      managedPolicies: BACKUP_ROLE_POLICIES.map((name) => ManagedPolicy.fromAwsManagedPolicyName(name)),
    });
    for (const name of BACKUP_ROLE_POLICIES) {
      acknowledge(
        this.role,
        `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${name}]`,
        "AWS Backup's own policies for its service role (backup and restore, plus the S3 backup and restore policies that bucket backups require): AWS keeps them in step with what each resource type needs, and only backup.amazonaws.com can assume this role.",
      );
    }
    this.plan.addSelection('Data', {
      backupSelectionName: 'database-and-objects',
      role: this.role,
      disableDefaultBackupPolicy: true,
      resources: [
        BackupResource.fromRdsDatabaseInstance(database.instance),
        BackupResource.fromArn(objectStore.bucket.bucketArn),
      ],
    });
  }
}

/** The vault in the copy region that the plan's copy action fills: the same lock and retention as the source vault. */
export class BackupCopyStack extends Stack {
  readonly vault: BackupVault;

  constructor(scope: Construct, id: string, props: StackProps & { settings: EnvironmentSettings }) {
    const { settings, ...stackProps } = props;
    super(scope, id, stackProps);
    Tags.of(this).add('service', 'case-evidence-billing');
    Tags.of(this).add('environment', settings.name);
    this.vault = lockedVault(this, settings, copyVaultName(settings), `${settings.name}, copies from another region`);
  }
}
