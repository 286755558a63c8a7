import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CustomResource, Duration, type Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { REPOSITORY_ROOT } from '../bundling';
import type { EnvironmentSettings } from '../environments';
import type { Database } from './database';
import type { FunctionWiring } from './function-wiring';
import { ServiceFunction } from './service-function';

/**
 * The migration step: runs the drizzle migrations on every deployment that changes them, before
 * any function of this deployment is updated (those depend on `resource`). Built in the stack's
 * scope (see Network).
 */
export class Migration {
  readonly function: ServiceFunction;
  readonly resource: CustomResource;

  constructor(stack: Stack, props: { settings: EnvironmentSettings; database: Database; wiring: FunctionWiring }) {
    const { settings, database, wiring } = props;
    this.function = new ServiceFunction(stack, 'Migrate', {
      ...wiring.shared,
      entry: 'infra/functions/migrate.ts',
      description: 'Applies the drizzle migrations and the application role grants',
      environment: {
        ...database.environment,
        DATABASE_ADMIN_SECRET_ARN: database.adminSecret.secretArn,
        LOG_LEVEL: settings.logLevel,
      },
      memoryMb: 512,
      timeoutSeconds: 600,
      retryAttempts: 0,
      bundling: { copyDirectories: ['drizzle'] },
    });
    this.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: [database.adminSecret.secretArn, database.appSecret.secretArn],
      }),
    );
    this.resource = new CustomResource(stack, 'Migrations', {
      serviceToken: this.function.function.functionArn,
      resourceType: 'Custom::DrizzleMigrations',
      properties: { migrationsHash: hashDirectory(join(REPOSITORY_ROOT, 'drizzle')) },
      serviceTimeout: Duration.minutes(12),
    });
    this.resource.node.addDependency(database.proxy, database.instance);
  }
}

/** Content hash of a directory tree: the migration step re-runs when it changes. */
function hashDirectory(directory: string): string {
  const hash = createHash('sha256');
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      else hash.update(relative(directory, path)).update('\0').update(readFileSync(path)).update('\0');
    }
  };
  walk(directory);
  return hash.digest('hex');
}
