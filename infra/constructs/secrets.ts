import { SecretValue, type Stack } from 'aws-cdk-lib';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { EnvironmentSettings } from '../environments';
import { dataRemovalPolicy } from './retention';

/** The secrets the functions read at cold start and again past their time-to-live (besides the database login). Built in the stack's scope (see Network). */
export class ServiceSecrets {
  readonly jwt: Secret;
  readonly stripe: ISecret;

  constructor(stack: Stack, settings: EnvironmentSettings) {
    const dataRemoval = dataRemovalPolicy(settings);
    this.jwt = new Secret(stack, 'JwtSigningKey', {
      description: `HMAC key of access tokens (${settings.name})`,
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: dataRemoval,
    });
    this.stripe = settings.stripe.secretArn
      ? Secret.fromSecretCompleteArn(stack, 'StripeKeys', settings.stripe.secretArn)
      : new Secret(stack, 'StripeKeys', {
          description: `Stripe keys (${settings.name}): fill in STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET`,
          // Placeholders only (empty values are ignored by lib/aws/secrets.ts); set the real
          // keys with `aws secretsmanager put-secret-value`, deployments never overwrite them.
          secretStringValue: SecretValue.unsafePlainText(
            JSON.stringify({ STRIPE_SECRET_KEY: '', STRIPE_WEBHOOK_SECRET: '' }),
          ),
          removalPolicy: dataRemoval,
        });
  }
}
