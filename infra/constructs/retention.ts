import { RemovalPolicy } from 'aws-cdk-lib';
import type { EnvironmentSettings } from '../environments';

/**
 * The removal policy of data and named resources (database, its secrets, buckets, log groups,
 * backup vaults). Where data is retained (prod) it is CloudFormation's `RetainExceptOnCreate`
 * (DeletionPolicy) with `UpdateReplacePolicy: Retain`: kept on stack deletion and on replacement,
 * but removed when the operation that created it rolls back, so a failed first deployment can
 * simply be retried instead of colliding with its own leftovers (a named bucket, a database
 * identifier). Elsewhere `cdk destroy` removes it.
 */
export function dataRemovalPolicy(settings: EnvironmentSettings): RemovalPolicy {
  return settings.retainData ? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE : RemovalPolicy.DESTROY;
}

/**
 * The removal policy of unnamed resources that keep history (log groups, failure queues, keys):
 * kept where data is retained (prod), removed elsewhere. Plain `Retain`: without a fixed name, a
 * retried first deployment creates new ones beside any leftovers instead of colliding with them.
 */
export function historyRemovalPolicy(settings: EnvironmentSettings): RemovalPolicy {
  return settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
}
