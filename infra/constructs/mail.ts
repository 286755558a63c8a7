import type { Stack } from 'aws-cdk-lib';
import { EmailIdentity, Identity } from 'aws-cdk-lib/aws-ses';
import type { EnvironmentSettings } from '../environments';

/** The SES sending identity (its DKIM records are stack outputs). Built in the stack's scope (see Network). */
export class Mail {
  readonly identity: EmailIdentity;
  /** The identities a function that sends mail may send as. */
  readonly identityArns: string[];

  constructor(stack: Stack, settings: EnvironmentSettings) {
    this.identity = new EmailIdentity(stack, 'MailIdentity', { identity: Identity.domain(settings.mail.domain) });
    this.identityArns = [settings.mail.domain, ...(settings.mail.extraIdentities ?? [])].map((identity) =>
      stack.formatArn({ service: 'ses', resource: 'identity', resourceName: identity }),
    );
  }
}
