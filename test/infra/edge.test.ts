import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { HttpApi, HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { type RouteName, routes } from '../../functions/routes';
import {
  AUTHENTICATION_ROUTES,
  CONTENT_BODY_ROUTES,
  ENUMERATION_ROUTES,
  Edge,
  numbersAbove,
} from '../../infra/constructs/edge';
import { type EnvironmentName, environments } from '../../infra/environments';
import { ERROR_STATUS } from '../../lib/http/errors';
import { MAX_REQUEST_BODY_BYTES } from '../../lib/http/payload-limits';
import { type SynthesizedResource, synthesizeForThisFile } from './synth';

/**
 * The edge (infra/constructs/edge.ts): CloudFront with an AWS WAF web ACL in front of the HTTP
 * API's regional custom domain, the API's execute-api endpoint off, and the secret origin header
 * the functions check.
 */

const ENVIRONMENTS: EnvironmentName[] = ['dev', 'prod'];
const synth = synthesizeForThisFile(ENVIRONMENTS);

/** CloudFront's managed policies, by id. */
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

const idOf = (construct: { node: { defaultChild?: unknown } }) => {
  const element = construct.node.defaultChild as CfnElement;
  return Stack.of(element).getLogicalId(element);
};

/** The parent template's resources (the edge lives there, not in a route stack). */
const parent = (environment: EnvironmentName) =>
  synth.templates(environment)[0]!.toJSON() as {
    Resources: Record<string, SynthesizedResource>;
    Outputs: Record<string, { Value: unknown }>;
  };

const only = (environment: EnvironmentName, type: string): [string, SynthesizedResource] => {
  const found = synth.resourcesOf(environment, type);
  expect(found, type).toHaveLength(1);
  return found[0]!;
};

const webAcl = (environment: EnvironmentName) => only(environment, 'AWS::WAFv2::WebACL')[1].Properties;
const ruleNamed = (environment: EnvironmentName, name: string) => {
  const rule = webAcl(environment).Rules.find((candidate: { Name: string }) => candidate.Name === name);
  expect(rule, name).toBeDefined();
  return rule;
};

/** The (path, method) pairs a scope-down statement matches: one AND of a path prefix and a method per route. */
function routesMatchedBy(statement: any): Array<{ path: string; method: string }> {
  const each = statement.OrStatement ? statement.OrStatement.Statements : [statement];
  return each.map((route: any) => {
    const [path, method] = route.AndStatement.Statements.map((s: any) => s.ByteMatchStatement);
    expect(path.FieldToMatch).toEqual({ UriPath: {} });
    expect(path.PositionalConstraint).toBe('STARTS_WITH');
    expect(path.TextTransformations.map((t: { Type: string }) => t.Type)).toEqual(['URL_DECODE', 'NORMALIZE_PATH']);
    expect(method.FieldToMatch).toEqual({ Method: {} });
    expect(method.PositionalConstraint).toBe('EXACTLY');
    return { path: path.SearchString, method: method.SearchString };
  });
}

const tableEntries = (names: readonly RouteName[]) =>
  names.map((name) => ({ path: routes[name].path, method: routes[name].method }));

describe.each(ENVIRONMENTS)('edge of %s', (environment) => {
  const settings = environments[environment];

  it('disables the execute-api endpoint of the HTTP API', () => {
    const [, api] = only(environment, 'AWS::ApiGatewayV2::Api');
    expect(api.Properties.DisableExecuteApiEndpoint).toBe(true);
  });

  it('serves the API on its regional custom domain, mapped to the $default stage', () => {
    const stack = synth.stacks[environment];
    const [domainId, domain] = only(environment, 'AWS::ApiGatewayV2::DomainName');
    expect(domain.Properties).toMatchObject({
      DomainName: settings.edge.originDomain,
      DomainNameConfigurations: [
        {
          CertificateArn: settings.edge.originCertificateArn,
          EndpointType: 'REGIONAL',
          SecurityPolicy: 'TLS_1_2',
        },
      ],
    });
    const [, mapping] = only(environment, 'AWS::ApiGatewayV2::ApiMapping');
    expect(mapping.Properties).toEqual({
      ApiId: { Ref: idOf(stack.api.httpApi) },
      DomainName: { Ref: domainId },
      Stage: stack.api.stage.stageName,
    });
    // The stage exists before it is mapped.
    expect(mapping.DependsOn).toContain(idOf(stack.api.stage));
  });

  it('puts CloudFront on the public domain: TLS 1.2_2021, no caching, every header but Host, HTTPS to the origin', () => {
    const [distributionId, distribution] = only(environment, 'AWS::CloudFront::Distribution');
    const [domainId] = only(environment, 'AWS::ApiGatewayV2::DomainName');
    const config = distribution.Properties.DistributionConfig;
    expect(config.Aliases).toEqual([settings.edge.apiDomain]);
    expect(config.ViewerCertificate).toEqual({
      AcmCertificateArn: settings.edge.certificateArn,
      MinimumProtocolVersion: 'TLSv1.2_2021',
      SslSupportMethod: 'sni-only',
    });
    expect(config.PriceClass).toBe('PriceClass_100');
    expect(config.DefaultCacheBehavior).toMatchObject({
      CachePolicyId: CACHING_DISABLED,
      OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
      ViewerProtocolPolicy: 'redirect-to-https',
    });
    expect([...config.DefaultCacheBehavior.AllowedMethods].sort()).toEqual(
      ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'].sort(),
    );
    expect(config.Origins).toHaveLength(1);
    expect(config.Origins[0]).toMatchObject({
      DomainName: { Ref: domainId },
      CustomOriginConfig: { OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] },
    });
    // Standard access logs into the edge's own bucket.
    const [bucketId] = synth
      .resourcesOf(environment, 'AWS::S3::Bucket')
      .find(([id]) => id.startsWith('EdgeAccessLogs')) ?? [undefined];
    expect(config.Logging).toEqual({
      Bucket: { 'Fn::GetAtt': [bucketId, 'RegionalDomainName'] },
      Prefix: 'cloudfront/',
    });
    // The ApiUrl output is the public domain; the outputs name both CNAME targets.
    const { Outputs } = parent(environment);
    expect(Outputs.ApiUrl!.Value).toBe(`https://${settings.edge.apiDomain}`);
    expect(Outputs.ApiDomainCnameTarget!.Value).toEqual({ 'Fn::GetAtt': [distributionId, 'DomainName'] });
    expect(Outputs.OriginDomainCnameTarget!.Value).toEqual({ 'Fn::GetAtt': [domainId, 'RegionalDomainName'] });
  });

  it('sends the origin-verify header with the value of a generated secret, as a dynamic reference', () => {
    const [, distribution] = only(environment, 'AWS::CloudFront::Distribution');
    const secrets = parent(environment).Resources;
    const [secretId, secret] =
      Object.entries(secrets).find(
        ([id, resource]) => resource.Type === 'AWS::SecretsManager::Secret' && id.startsWith('OriginVerify'),
      ) ?? [];
    expect(secret?.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 64, ExcludePunctuation: true });
    expect(distribution.Properties.DistributionConfig.Origins[0].OriginCustomHeaders).toEqual([
      {
        HeaderName: 'x-origin-verify',
        HeaderValue: { 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, ':SecretString:::}}']] },
      },
    ]);
    // Every function gets its ARN and may read it (parent-stack functions reference it directly,
    // route functions through their nested stack's parameter).
    const functions = synth.resourcesOf(environment, 'AWS::Lambda::Function');
    const service = functions.filter(([, fn]) => fn.Properties.Environment?.Variables?.JWT_SECRET_ARN);
    expect(service.length).toBeGreaterThanOrEqual(2 + 3);
    for (const [id, fn] of service)
      expect(fn.Properties.Environment.Variables, id).toHaveProperty('ORIGIN_VERIFY_SECRET_ARN');
    const inParent = service.filter(([id]) => id in secrets);
    expect(inParent.length).toBeGreaterThan(0);
    for (const [, fn] of inParent)
      expect(fn.Properties.Environment.Variables.ORIGIN_VERIFY_SECRET_ARN).toEqual({ Ref: secretId });
    const roles = Object.fromEntries(synth.resourcesOf(environment, 'AWS::IAM::Role'));
    for (const [id, fn] of service) {
      const role = roles[fn.Properties.Role['Fn::GetAtt'][0]];
      const reads = (role?.Properties.Policies ?? [])
        .flatMap((policy: any) => policy.PolicyDocument.Statement)
        .filter((statement: any) => [statement.Action].flat().includes('secretsmanager:GetSecretValue'));
      expect(JSON.stringify(reads), id).toContain(
        JSON.stringify(fn.Properties.Environment.Variables.ORIGIN_VERIFY_SECRET_ARN),
      );
    }
  });

  it('associates the web ACL (scope CLOUDFRONT, metrics and sampled requests on) with the distribution', () => {
    const [aclId, acl] = only(environment, 'AWS::WAFv2::WebACL');
    const [, distribution] = only(environment, 'AWS::CloudFront::Distribution');
    expect(distribution.Properties.DistributionConfig.WebACLId).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
    expect(acl.Properties.Scope).toBe('CLOUDFRONT');
    expect(acl.Properties.DefaultAction).toEqual({ Allow: {} });
    for (const visibility of [
      acl.Properties.VisibilityConfig,
      ...acl.Properties.Rules.map((r: any) => r.VisibilityConfig),
    ])
      expect(visibility).toMatchObject({ CloudWatchMetricsEnabled: true, SampledRequestsEnabled: true });
  });

  it.each([
    ['RateAuthentication', 'authentication', AUTHENTICATION_ROUTES],
    ['RateEnumeration', 'enumeration', ENUMERATION_ROUTES],
  ] as const)('%s: per client IP per 5 minutes, scoped to the routes of the table', (name, limit, names) => {
    const rule = ruleNamed(environment, name);
    const rate = rule.Statement.RateBasedStatement;
    expect(rate).toMatchObject({
      AggregateKeyType: 'IP',
      EvaluationWindowSec: 300,
      Limit: settings.edge.rateLimitsPer5Minutes[limit],
    });
    expect(routesMatchedBy(rate.ScopeDownStatement)).toEqual(tableEntries(names));
    expect(rule.Action.Block.CustomResponse).toMatchObject({ ResponseCode: 429, CustomResponseBodyKey: 'rateLimited' });
  });

  it('covers sign-in, registration, password reset and change, and token refresh in the authentication rule', () => {
    const paths = routesMatchedBy(
      ruleNamed(environment, 'RateAuthentication').Statement.RateBasedStatement.ScopeDownStatement,
    ).map((route) => route.path);
    expect(paths.sort()).toEqual(
      [
        '/auth/login',
        '/auth/register',
        '/auth/send-forgot-password-link',
        '/auth/reset-password',
        '/user/change-password',
        '/auth/refresh',
      ].sort(),
    );
    expect(
      routesMatchedBy(ruleNamed(environment, 'RateEnumeration').Statement.RateBasedStatement.ScopeDownStatement)
        .map((route) => route.path)
        .sort(),
    ).toEqual(['/auth/check-email-availability', '/auth/register', '/auth/send-forgot-password-link']);
  });

  it('limits every request of one IP with the everything rule', () => {
    const rule = ruleNamed(environment, 'RateEverything');
    expect(rule.Statement.RateBasedStatement).toEqual({
      AggregateKeyType: 'IP',
      EvaluationWindowSec: 300,
      Limit: settings.edge.rateLimitsPer5Minutes.everything,
    });
  });

  it('answers rate-limited requests 429 with the error envelope', () => {
    const bodies = webAcl(environment).CustomResponseBodies;
    expect(bodies.rateLimited.ContentType).toBe('APPLICATION_JSON');
    const body = JSON.parse(bodies.rateLimited.Content);
    expect(body).toEqual({
      statusCode: 429,
      timestamp: expect.any(String),
      error: { code: 'RATE_LIMITED', message: expect.any(String) },
      requestId: expect.any(String),
    });
    expect(ERROR_STATUS.RATE_LIMITED).toBe(429);
    expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
    expect(JSON.parse(bodies.refused.Content)).toMatchObject({ statusCode: 403, error: { code: 'FORBIDDEN' } });
  });

  it('runs the AWS managed known-bad-inputs and common rule sets, the common set counting bodies over 8 KB', () => {
    const badInputs = ruleNamed(environment, 'AWSManagedRulesKnownBadInputsRuleSet');
    expect(badInputs.OverrideAction).toEqual({ None: {} });
    expect(badInputs.Statement.ManagedRuleGroupStatement).toEqual({
      VendorName: 'AWS',
      Name: 'AWSManagedRulesKnownBadInputsRuleSet',
    });
    const common = ruleNamed(environment, 'AWSManagedRulesCommonRuleSet');
    expect(common.OverrideAction).toEqual({ None: {} });
    const group = common.Statement.ManagedRuleGroupStatement;
    expect(group).toMatchObject({ VendorName: 'AWS', Name: 'AWSManagedRulesCommonRuleSet' });
    const overrides = Object.fromEntries(
      group.RuleActionOverrides.map((o: { Name: string; ActionToUse: unknown }) => [o.Name, o.ActionToUse]),
    );
    expect(overrides.SizeRestrictions_BODY).toEqual({ Count: {} });
    // The rate rules come first, so every request counts towards them.
    const priorities = Object.fromEntries(webAcl(environment).Rules.map((r: any) => [r.Name, r.Priority]));
    expect(Math.max(priorities.RateAuthentication, priorities.RateEnumeration, priorities.RateEverything)).toBeLessThan(
      Math.min(priorities.AWSManagedRulesKnownBadInputsRuleSet, priorities.AWSManagedRulesCommonRuleSet),
    );
  });

  it('refuses a body over the request limit by its Content-Length: 413 in the envelope, after the rate rules', () => {
    const rule = ruleNamed(environment, 'BodyOverRequestLimit');
    expect(rule.Action.Block.CustomResponse).toEqual({ ResponseCode: 413, CustomResponseBodyKey: 'tooLarge' });
    expect(JSON.parse(webAcl(environment).CustomResponseBodies.tooLarge.Content)).toEqual({
      statusCode: 413,
      timestamp: expect.any(String),
      error: { code: 'PAYLOAD_TOO_LARGE', message: `The request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes` },
      requestId: 'edge',
    });
    expect(ERROR_STATUS.PAYLOAD_TOO_LARGE).toBe(413);
    const match = rule.Statement.RegexMatchStatement;
    expect(match.FieldToMatch).toEqual({ SingleHeader: { Name: 'content-length' } });
    expect(match.RegexString).toBe(numbersAbove(MAX_REQUEST_BODY_BYTES));
    // WAF takes inline patterns of at most 512 characters.
    expect(match.RegexString.length).toBeLessThanOrEqual(512);
    const priorities = Object.fromEntries(webAcl(environment).Rules.map((r: any) => [r.Name, r.Priority]));
    expect(rule.Priority).toBeGreaterThan(priorities.RateEverything);
    expect(rule.Priority).toBeLessThan(priorities.AWSManagedRulesKnownBadInputsRuleSet);
  });

  it('blocks the common set body findings it counts everywhere but on the content routes', () => {
    const common = ruleNamed(environment, 'AWSManagedRulesCommonRuleSet').Statement.ManagedRuleGroupStatement;
    const counted = common.RuleActionOverrides.map((o: { Name: string }) => o.Name).filter(
      (name: string) => name !== 'SizeRestrictions_BODY',
    );
    const rule = ruleNamed(environment, 'CommonRuleSetBodyOutsideContentRoutes');
    expect(rule.Priority).toBeGreaterThan(ruleNamed(environment, 'AWSManagedRulesCommonRuleSet').Priority);
    expect(rule.Action.Block.CustomResponse).toMatchObject({ ResponseCode: 403, CustomResponseBodyKey: 'refused' });
    const [labels, exempt] = rule.Statement.AndStatement.Statements;
    expect(labels.OrStatement.Statements.map((s: any) => s.LabelMatchStatement.Key)).toEqual(
      counted.map((name: string) => `awswaf:managed:aws:core-rule-set:${name.replace(/_BODY$/, '_Body')}`),
    );
    expect(routesMatchedBy(exempt.NotStatement.Statement)).toEqual(tableEntries(CONTENT_BODY_ROUTES));
  });
});

describe('numbersAbove (the Content-Length pattern)', () => {
  it.each([0, 9, 10, 99, 1_000, 2_999_999, MAX_REQUEST_BODY_BYTES, 3_145_728, 9_999_999])(
    'matches exactly the decimal numbers above %i, with or without leading zeros',
    (limit) => {
      const pattern = new RegExp(numbersAbove(limit));
      const candidates = [0, 1, limit - 10, limit - 1, limit, limit + 1, limit + 9, limit + 10, limit * 10, 10 ** 12];
      for (let step = 1; step < limit * 3; step = step * 3 + 7) candidates.push(step);
      for (const value of candidates.filter((n) => n >= 0)) {
        expect(pattern.test(String(value)), `${value} against ${limit}`).toBe(value > limit);
        expect(pattern.test(`00${value}`), `00${value} against ${limit}`).toBe(value > limit);
      }
      expect(pattern.test('')).toBe(false);
      expect(pattern.test('12a')).toBe(false);
    },
  );
});

describe('edge region', () => {
  it('refuses to synthesize the CLOUDFRONT web ACL outside us-east-1', () => {
    const app = new App();
    const stack = new Stack(app, 'Elsewhere', { env: { account: '111111111111', region: 'eu-west-1' } });
    const httpApi = new HttpApi(stack, 'Api', { createDefaultStage: false });
    const stage = new HttpStage(stack, 'Stage', { httpApi, stageName: '$default' });
    expect(
      () =>
        new Edge(stack, 'Edge', {
          settings: environments.dev,
          httpApi,
          stage,
          originVerify: new Secret(stack, 'OriginVerify'),
        }),
    ).toThrow(/us-east-1.*eu-west-1|eu-west-1.*us-east-1/);
  });
});
