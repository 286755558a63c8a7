import { Stack, Validations } from 'aws-cdk-lib';
import type { ManagedPolicy, Role } from 'aws-cdk-lib/aws-iam';
import type { DatabaseInstance } from 'aws-cdk-lib/aws-rds';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference';
import type { IConstruct } from 'constructs';
import type { RouteStack } from './constructs/route-stack';
import type { EnvironmentSettings } from './environments';

/**
 * Every cdk-nag (AwsSolutions) finding the stack accepts, each on the narrowest construct and
 * with its reason. Anything else fails synth (test/infra checks there is no unacknowledged error).
 */

export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}

export function acknowledgeStackFindings(parts: {
  settings: EnvironmentSettings;
  networkPolicy: ManagedPolicy;
  instance: DatabaseInstance;
  secrets: { appSecret: ISecret; jwtSecret: ISecret; stripeSecret: ISecret };
  routeStacks: RouteStack[];
}): void {
  const { settings, networkPolicy, instance, secrets } = parts;

  acknowledge(
    networkPolicy,
    'AwsSolutions-IAM5[Resource::*]',
    'The ENI actions a VPC Lambda function needs (ec2:CreateNetworkInterface, DescribeNetworkInterfaces, DescribeSubnets, DeleteNetworkInterface, Assign/UnassignPrivateIpAddresses) do not support resource-level permissions; these are the actions of AWSLambdaVPCAccessExecutionRole, without its log permissions.',
  );

  acknowledge(
    instance,
    'AwsSolutions-RDS11',
    'The instance is reachable only from the RDS Proxy security group in isolated subnets, and clients connect to the proxy, which listens on 5432 whatever the instance port: a non-default port would hide nothing.',
  );
  if (!settings.database.multiAz) {
    acknowledge(
      instance,
      'AwsSolutions-RDS3',
      `${settings.name} is a non-production environment: single-AZ halves the database cost; prod runs multi-AZ.`,
    );
  }
  if (!settings.retainData) {
    acknowledge(
      instance,
      'AwsSolutions-RDS10',
      `${settings.name} is a non-production environment that is torn down with cdk destroy; prod has deletion protection and RETAIN.`,
    );
  }

  acknowledge(
    instance.node.findChild('Secret'),
    'AwsSolutions-SMG4',
    'Admin login, used only by the migration step (through the proxy). Rotation needs a rotation function with a network path to the isolated database subnets; planned follow-up (instance.addRotationSingleUser). Until then rotate by hand as infra/README.md describes.',
  );
  acknowledge(
    secrets.appSecret,
    'AwsSolutions-SMG4',
    'Route functions read these credentials again at most every 5 minutes; single-user rotation would lock warm functions out of new proxy connections for up to that long. Rotated by hand (new value, then the migration step sets it on the role; infra/README.md); multi-user rotation is a follow-up.',
  );
  acknowledge(
    secrets.jwtSecret,
    'AwsSolutions-SMG4',
    'HMAC key of 15-minute access tokens: an automatic rotation would sign out every session at once unless lib/auth/jwt.ts verified with the previous key too. Rotated by hand (infra/README.md).',
  );
  acknowledge(
    secrets.stripeSecret,
    'AwsSolutions-SMG4',
    'Stripe API keys are issued and rolled in the Stripe dashboard; the new key is put into this secret by hand.',
  );

  for (const routeStack of parts.routeStacks) {
    acknowledge(
      routeStack,
      'AwsSolutions-APIG4',
      'Authorization happens in every handler (lib/http/authenticate.ts: a JWT of a live session, an automation or a legacy token, checked against the database per request, plus scopes and organization roles). Public routes (login, register, password reset, Stripe webhook with its signature check) are public by contract; an API Gateway authorizer would only add a second invocation per request.',
    );
  }
}

/** Object access by key prefix: `arn:aws:s3:::bucket/generated/*` is the narrowest resource for generated keys. */
export function acknowledgePrefixWildcards(role: Role, objectArns: string[]): void {
  for (const arn of objectArns) {
    const resource = flattenCfnReference(Stack.of(role).resolve(arn));
    acknowledge(
      role,
      `AwsSolutions-IAM5[Resource::${resource}]`,
      'Object keys contain generated ids; access is limited to the key prefixes this function reads, writes or deletes, with GetObject(Version)/PutObject/DeleteObject and the multipart actions only.',
    );
  }
}
