import { Duration, type Stack } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { EnvironmentSettings } from '../environments';
import type { FunctionWiring } from './function-wiring';
import type { Migration } from './migration';
import { ServiceFunction } from './service-function';

/** The maintenance function (lib/maintenance.ts) on a schedule. Built in the stack's scope (see Network). */
export class Maintenance {
  readonly function: ServiceFunction;

  constructor(stack: Stack, props: { settings: EnvironmentSettings; wiring: FunctionWiring; migration: Migration }) {
    const { settings, wiring, migration } = props;
    this.function = new ServiceFunction(stack, 'Maintenance', {
      ...wiring.shared,
      entry: 'infra/functions/maintenance.ts',
      description: 'Outbox delivery, rate-limit pruning, processor customers',
      environment: wiring.environment,
      memoryMb: 512,
      timeoutSeconds: 120,
      retryAttempts: 0,
    });
    this.function.function.node.addDependency(migration.resource);
    wiring.wire('maintenance', this.function);
    new Rule(stack, 'MaintenanceSchedule', {
      description: 'Runs lib/maintenance.ts',
      schedule: Schedule.rate(Duration.minutes(settings.maintenanceEveryMinutes)),
      targets: [new LambdaFunction(this.function.function, { retryAttempts: 0 })],
    });
  }
}
