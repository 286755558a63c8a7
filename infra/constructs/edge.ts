import { Duration, SecretValue, Stack, Token } from 'aws-cdk-lib';
import {
  ApiMapping,
  DomainName,
  EndpointType,
  type HttpApi,
  type IStage,
  SecurityPolicy,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  PriceClass,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { CfnWebACL, type CfnWebACLProps } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { type RouteName, routes } from '../../functions/routes';
import { ORIGIN_VERIFY_HEADER } from '../../lib/http/edge';
import type { ErrorCode } from '../../lib/http/errors';
import { MAX_REQUEST_BODY_BYTES } from '../../lib/http/payload-limits';
import type { RouteDefinition } from '../../lib/http/route';
import type { EnvironmentSettings } from '../environments';
import { acknowledge } from '../nag';
import { dataRemovalPolicy } from './retention';

/** Routes whose callers try passwords or tokens: sign-in, registration, password reset and change, token refresh. */
export const AUTHENTICATION_ROUTES = [
  'login',
  'register',
  'sendForgotPasswordLink',
  'resetPassword',
  'changePassword',
  'refreshToken',
] as const satisfies readonly RouteName[];
/**
 * The routes that tell whether an address has an account (enumeration): those of the service's
 * shared `enumeration` limit in the route table (check-email, register, forgot-password), so the
 * edge counts what the service counts.
 */
export const ENUMERATION_ROUTES: readonly RouteName[] = (Object.keys(routes) as RouteName[]).filter(
  (name) => (routes[name] as RouteDefinition).rateLimit?.shared === 'enumeration',
);
/**
 * Routes whose bodies are content, not commands: device notes carry the notes' own HTML (evidence,
 * stored as received, never rendered by the API) and Stripe events carry customers' free text;
 * both are verified by other means (a signed-in importer, Stripe's signature). The common rule
 * set's body rules (cross-site scripting, path traversal, remote files, metadata SSRF) only count
 * there.
 */
export const CONTENT_BODY_ROUTES = ['importCaseNotes', 'stripeWebhook'] as const satisfies readonly RouteName[];

/** Body rules of AWSManagedRulesCommonRuleSet that run in Count and block through a label rule outside CONTENT_BODY_ROUTES. */
const CONTENT_BODY_RULES = ['CrossSiteScripting_BODY', 'GenericLFI_BODY', 'GenericRFI_BODY', 'EC2MetaDataSSRF_BODY'];
/** Their labels (the rule group names a rule's label with the suffix in mixed case). */
const labelOf = (rule: string) => `awswaf:managed:aws:core-rule-set:${rule.replace(/_BODY$/, '_Body')}`;

/** The region of CloudFront's web ACLs: a CLOUDFRONT-scoped ACL can only be created in us-east-1. */
export const EDGE_REGION = 'us-east-1';

/**
 * The value CloudFront sends to the API in x-origin-verify, and which the functions compare
 * (lib/http/edge.ts): a request without it did not come through the edge. Built before the
 * functions, which get its ARN.
 */
export function createOriginVerifySecret(scope: Construct, settings: EnvironmentSettings): Secret {
  const secret = new Secret(scope, 'OriginVerify', {
    description: `Value of the x-origin-verify header CloudFront sends to the API (${settings.name})`,
    // Letters and digits: a header value as is.
    generateSecretString: { passwordLength: 64, excludePunctuation: true },
    removalPolicy: dataRemovalPolicy(settings),
  });
  acknowledge(
    secret,
    'AwsSolutions-SMG4',
    'CloudFront reads this value when the distribution is deployed (a dynamic reference) while functions read it again every 5 minutes: an automatic rotation would make the API refuse every request until the next deployment. Rotated by hand with a deployment (infra/README.md).',
  );
  return secret;
}

export interface EdgeProps {
  settings: EnvironmentSettings;
  httpApi: HttpApi;
  stage: IStage;
  originVerify: Secret;
}

/**
 * The public edge of the API: CloudFront (alternate domain `edge.apiDomain`, no caching, every
 * viewer header but Host forwarded, plus the viewer's address) with an AWS WAF web ACL (per-IP rate
 * rules, AWS managed common and known-bad-inputs rules), in front of the HTTP API's regional custom
 * domain `edge.originDomain`. The API's own execute-api endpoint is disabled (Api), and the
 * functions refuse requests without CloudFront's x-origin-verify header, so nothing reaches a
 * function except through the web ACL.
 */
export class Edge extends Construct {
  readonly originDomain: DomainName;
  readonly distribution: Distribution;
  readonly webAcl: CfnWebACL;
  readonly logBucket: Bucket;

  constructor(scope: Construct, id: string, props: EdgeProps) {
    super(scope, id);
    const { settings, httpApi, stage, originVerify } = props;
    const { region } = Stack.of(this);
    if (Token.isUnresolved(region) || region !== EDGE_REGION)
      throw new Error(
        `The edge's web ACL (scope CLOUDFRONT) and CloudFront's certificate live in ${EDGE_REGION}, but stack ${Stack.of(this).stackName} is in ${Token.isUnresolved(region) ? 'an unresolved region' : region}. Deploy the stack to ${EDGE_REGION}, or move the web ACL into a stack of its own in ${EDGE_REGION} and pass its ARN (infra/README.md).`,
      );

    this.originDomain = new DomainName(this, 'OriginDomain', {
      domainName: settings.edge.originDomain,
      certificate: Certificate.fromCertificateArn(this, 'OriginCertificate', settings.edge.originCertificateArn),
      endpointType: EndpointType.REGIONAL,
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
    const mapping = new ApiMapping(this, 'OriginMapping', { api: httpApi, domainName: this.originDomain, stage });

    this.webAcl = new CfnWebACL(this, 'WebAcl', webAclProps(settings));

    this.logBucket = new Bucket(this, 'AccessLogs', {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      // CloudFront's standard logs are written with a bucket ACL.
      objectOwnership: ObjectOwnership.OBJECT_WRITER,
      lifecycleRules: [{ expiration: Duration.days(settings.logRetention) }],
      removalPolicy: dataRemovalPolicy(settings),
    });
    acknowledge(
      this.logBucket,
      'AwsSolutions-S1',
      "This bucket holds CloudFront's access logs; logging its own accesses into another bucket would only log the log writer.",
    );

    this.distribution = new Distribution(this, 'Distribution', {
      comment: `Case Evidence API (${settings.name})`,
      domainNames: [settings.edge.apiDomain],
      certificate: Certificate.fromCertificateArn(this, 'Certificate', settings.edge.certificateArn),
      minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021,
      httpVersion: HttpVersion.HTTP2_AND_3,
      priceClass: PriceClass.PRICE_CLASS_100,
      webAclId: this.webAcl.attrArn,
      enableLogging: true,
      logBucket: this.logBucket,
      logFilePrefix: 'cloudfront/',
      defaultBehavior: {
        origin: new HttpOrigin(this.originDomain.name, {
          protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [OriginSslPolicy.TLS_V1_2],
          // API Gateway answers within 30 s (its integration limit); CloudFront's default is 30 s too.
          readTimeout: Duration.seconds(30),
          customHeaders: {
            // A CloudFormation dynamic reference: resolved at deployment, never in the template.
            [ORIGIN_VERIFY_HEADER]: SecretValue.secretsManager(originVerify.secretArn).unsafeUnwrap(),
          },
        }),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: AllowedMethods.ALLOW_ALL,
        cachePolicy: CachePolicy.CACHING_DISABLED,
        // Every viewer header except Host (API Gateway's custom domain needs its own name there),
        // query string and cookie, plus CloudFront's viewer headers, CloudFront-Viewer-Address among them.
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      },
    });
    this.distribution.node.addDependency(mapping);
    acknowledge(
      this.distribution,
      'AwsSolutions-CFR1',
      'The API serves its clients wherever they are; per-client limits sit in the web ACL instead of a country allow-list.',
    );
  }
}

// ---- the web ACL

type Statement = CfnWebACL.StatementProperty;

const metric = (settings: EnvironmentSettings, name: string): CfnWebACL.VisibilityConfigProperty => ({
  cloudWatchMetricsEnabled: true,
  sampledRequestsEnabled: true,
  metricName: `case-evidence-${settings.name}-${name}`,
});

const either = (statements: Statement[]): Statement =>
  statements.length === 1 ? statements[0]! : { orStatement: { statements } };

/** WAF's custom response bodies: the service's error envelope (static: WAF cannot insert a time or an id). */
const RESPONSE_BODIES = {
  rateLimited: {
    status: 429,
    code: 'RATE_LIMITED',
    message: 'Too many requests from your address; try again in a few minutes',
  },
  refused: { status: 403, code: 'FORBIDDEN', message: 'The request was refused by the firewall of the API' },
  tooLarge: {
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
    message: `The request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes`,
  },
} as const satisfies Record<string, { status: number; code: ErrorCode; message: string }>;

/**
 * The error envelope `{ statusCode, timestamp, error: { code, message }, requestId }` as WAF
 * answers it: its answers are static, so the timestamp is the epoch and the request id `edge`;
 * CloudFront's X-Amz-Cf-Id header identifies the request.
 */
export function edgeErrorBody(status: number, code: ErrorCode, message: string): string {
  return JSON.stringify({
    statusCode: status,
    timestamp: new Date(0).toISOString(),
    error: { code, message },
    requestId: 'edge',
  });
}

/**
 * A route of the table by method and path, as WAF sees it (URL-decoded, dot segments and double
 * slashes removed). The path is a prefix, so `/auth/login/` is counted too: no other route starts
 * with a scoped path (checked here), so the prefix matches only this route and unknown paths.
 */
function routeStatement(route: RouteDefinition): Statement {
  if (route.path.includes('{')) throw new Error(`WAF scope-down on ${route.operationId}: only literal paths`);
  const prefixOf = routeListOf().find((other) => other !== route && other.path.startsWith(route.path));
  if (prefixOf)
    throw new Error(`WAF scope-down on ${route.operationId}: ${prefixOf.operationId} starts with ${route.path}`);
  return {
    andStatement: {
      statements: [
        {
          byteMatchStatement: {
            fieldToMatch: { uriPath: {} },
            positionalConstraint: 'STARTS_WITH',
            searchString: route.path,
            textTransformations: [
              { priority: 0, type: 'URL_DECODE' },
              { priority: 1, type: 'NORMALIZE_PATH' },
            ],
          },
        },
        {
          byteMatchStatement: {
            fieldToMatch: { method: {} },
            positionalConstraint: 'EXACTLY',
            searchString: route.method,
            textTransformations: [{ priority: 0, type: 'NONE' }],
          },
        },
      ],
    },
  };
}

const routeListOf = (): RouteDefinition[] => Object.values(routes);

/**
 * A regular expression of the decimal numbers greater than `limit` (leading zeros allowed): WAF
 * compares a header's length, never its value, so a Content-Length over the limit is matched by
 * its digits: more of them, or as many with a greater digit after an equal start.
 */
export function numbersAbove(limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new Error(`Not a byte count: ${limit}`);
  const digits = String(limit);
  const longer = `[1-9]\\d{${digits.length},}`;
  const sameLength = [...digits].flatMap((digit, at) => {
    if (digit === '9') return [];
    const rest = digits.length - at - 1;
    return [`${digits.slice(0, at)}[${Number(digit) + 1}-9]${rest > 0 ? `\\d{${rest}}` : ''}`];
  });
  return `^0*(?:${[longer, ...sameLength].join('|')})$`;
}

/**
 * Refuses a body over the service's request limit (MAX_REQUEST_BODY_BYTES) by its Content-Length,
 * 413 in the envelope, before CloudFront sends it on: a larger body would make an invocation event
 * Lambda refuses with the gateway's own answer. A body sent without a length (chunked) reaches the
 * function, which refuses it by its bytes (lib/http/payload-limits.ts).
 */
function bodySizeRule(settings: EnvironmentSettings, priority: number): CfnWebACL.RuleProperty {
  return {
    name: 'BodyOverRequestLimit',
    priority,
    action: {
      block: { customResponse: { responseCode: RESPONSE_BODIES.tooLarge.status, customResponseBodyKey: 'tooLarge' } },
    },
    statement: {
      regexMatchStatement: {
        fieldToMatch: { singleHeader: { Name: 'content-length' } },
        regexString: numbersAbove(MAX_REQUEST_BODY_BYTES),
        textTransformations: [{ priority: 0, type: 'NONE' }],
      },
    },
    visibilityConfig: metric(settings, 'BodyOverRequestLimit'),
  };
}

/** The routes of the table by operation id: the WAF rules cover the whole API, whatever subset a synth deploys. */
const routesNamed = (names: readonly RouteName[]): RouteDefinition[] => names.map((name) => routes[name]);

function rateRule(
  settings: EnvironmentSettings,
  name: string,
  priority: number,
  limit: number,
  scope?: readonly RouteName[],
): CfnWebACL.RuleProperty {
  if (!Number.isInteger(limit) || limit < 10 || limit > 2_000_000_000)
    throw new Error(`WAF rate limit ${name} of ${settings.name}: ${limit} is not an integer from 10 to 2,000,000,000`);
  return {
    name,
    priority,
    action: {
      block: {
        customResponse: {
          responseCode: RESPONSE_BODIES.rateLimited.status,
          customResponseBodyKey: 'rateLimited',
          responseHeaders: [{ name: 'Retry-After', value: '60' }],
        },
      },
    },
    statement: {
      rateBasedStatement: {
        aggregateKeyType: 'IP',
        evaluationWindowSec: 300,
        limit,
        ...(scope ? { scopeDownStatement: either(routesNamed(scope).map(routeStatement)) } : {}),
      },
    },
    visibilityConfig: metric(settings, name),
  };
}

/**
 * Rules, in order: per-IP rate limits (first, so every request counts, also those a later rule
 * blocks), bodies over the request limit, AWS's known-bad-inputs and common rule sets, then the common set's body findings outside
 * the content routes. Requests matching none are allowed.
 */
export function webAclProps(settings: EnvironmentSettings): CfnWebACLProps {
  const limits = settings.edge.rateLimitsPer5Minutes;
  const managed = (name: string, priority: number, overrides: string[] = []): CfnWebACL.RuleProperty => ({
    name,
    priority,
    overrideAction: { none: {} },
    statement: {
      managedRuleGroupStatement: {
        vendorName: 'AWS',
        name,
        ...(overrides.length > 0
          ? { ruleActionOverrides: overrides.map((rule) => ({ name: rule, actionToUse: { count: {} } })) }
          : {}),
      },
    },
    visibilityConfig: metric(settings, name),
  });
  return {
    name: `case-evidence-${settings.name}-edge`,
    description: `Per-client limits and managed rules in front of the Case Evidence API, ${settings.name}`,
    scope: 'CLOUDFRONT',
    defaultAction: { allow: {} },
    visibilityConfig: metric(settings, 'edge'),
    customResponseBodies: Object.fromEntries(
      Object.entries(RESPONSE_BODIES).map(([key, body]) => [
        key,
        { contentType: 'APPLICATION_JSON', content: edgeErrorBody(body.status, body.code, body.message) },
      ]),
    ),
    rules: [
      rateRule(settings, 'RateAuthentication', 0, limits.authentication, AUTHENTICATION_ROUTES),
      rateRule(settings, 'RateEnumeration', 1, limits.enumeration, ENUMERATION_ROUTES),
      rateRule(settings, 'RateEverything', 2, limits.everything),
      bodySizeRule(settings, 3),
      managed('AWSManagedRulesKnownBadInputsRuleSet', 4),
      // SizeRestrictions_BODY (over 8 KB) only counts: registration with 50 invitations, 100
      // attachment uploads, device notes and Stripe events are legitimately larger. The service's
      // request limit (BodyOverRequestLimit) and each route's schema bound bodies instead.
      managed('AWSManagedRulesCommonRuleSet', 5, ['SizeRestrictions_BODY', ...CONTENT_BODY_RULES]),
      {
        name: 'CommonRuleSetBodyOutsideContentRoutes',
        priority: 6,
        action: {
          block: { customResponse: { responseCode: RESPONSE_BODIES.refused.status, customResponseBodyKey: 'refused' } },
        },
        statement: {
          andStatement: {
            statements: [
              either(
                CONTENT_BODY_RULES.map((rule) => ({ labelMatchStatement: { scope: 'LABEL', key: labelOf(rule) } })),
              ),
              { notStatement: { statement: either(routesNamed(CONTENT_BODY_ROUTES).map(routeStatement)) } },
            ],
          },
        },
        visibilityConfig: metric(settings, 'CommonRuleSetBodyOutsideContentRoutes'),
      },
    ],
  };
}
