import type { Stack } from 'aws-cdk-lib';
import {
  FlowLogDestination,
  FlowLogTrafficType,
  GatewayVpcEndpointAwsService,
  IpAddresses,
  SecurityGroup,
  SubnetType,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { EnvironmentSettings } from '../environments';
import { dataRemovalPolicy } from './retention';

/**
 * The VPC: public subnets for the NAT gateways, private subnets with egress for the functions
 * (Secrets Manager, SES, Stripe), isolated subnets for the database and its proxy; and the
 * security groups of the three tiers.
 *
 * Like the other parts of the stack it builds in the stack's own scope, not in a scope of its
 * own: that keeps the logical ids of the deployed stacks (a new scope renames, and so replaces,
 * the VPC and the database).
 */
export class Network {
  readonly vpc: Vpc;
  readonly functionsSecurityGroup: SecurityGroup;
  readonly proxySecurityGroup: SecurityGroup;
  readonly databaseSecurityGroup: SecurityGroup;

  constructor(stack: Stack, settings: EnvironmentSettings) {
    this.vpc = new Vpc(stack, 'Vpc', {
      ipAddresses: IpAddresses.cidr('10.40.0.0/16'),
      availabilityZones: settings.availabilityZones ?? [`${stack.region}a`, `${stack.region}b`],
      natGateways: settings.natGateways,
      subnetConfiguration: [
        { name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'functions', subnetType: SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 20 },
        { name: 'data', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 24 },
      ],
      flowLogs: {
        rejected: {
          trafficType: FlowLogTrafficType.REJECT,
          // Kept in prod like every log group there: rejected connections are part of an incident's record.
          destination: FlowLogDestination.toCloudWatchLogs(
            new LogGroup(stack, 'FlowLogs', {
              retention: settings.logRetention,
              removalPolicy: dataRemovalPolicy(settings),
            }),
          ),
        },
      },
    });
    // S3 traffic (report uploads, presigned downloads) stays off the NAT gateways.
    this.vpc.addGatewayEndpoint('S3Endpoint', { service: GatewayVpcEndpointAwsService.S3 });

    this.functionsSecurityGroup = new SecurityGroup(stack, 'FunctionsSecurityGroup', {
      vpc: this.vpc,
      description: 'Lambda functions of the service',
      allowAllOutbound: true,
    });
    this.proxySecurityGroup = new SecurityGroup(stack, 'ProxySecurityGroup', {
      vpc: this.vpc,
      description: 'RDS Proxy: Postgres from the functions only',
      allowAllOutbound: false,
    });
    this.databaseSecurityGroup = new SecurityGroup(stack, 'DatabaseSecurityGroup', {
      vpc: this.vpc,
      description: 'RDS PostgreSQL: from the proxy only',
      allowAllOutbound: false,
    });
  }
}
