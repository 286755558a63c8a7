import { config } from '../config';
import type { MailMessage } from './transport';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A link into the web app; emailed tokens always travel as the `token=` query parameter. */
export function appLink(path: string, params: Record<string, string>): string {
  const url = new URL(path, config().APP_URL);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.toString();
}

function message(
  to: string,
  subject: string,
  paragraphs: string[],
  action?: { label: string; url: string },
): MailMessage {
  const text = [...paragraphs, ...(action ? [`${action.label}: ${action.url}`] : [])].join('\n\n');
  const html = [
    ...paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`),
    ...(action ? [`<p><a href="${escapeHtml(action.url)}">${escapeHtml(action.label)}</a></p>`] : []),
  ].join('\n');
  return { to, subject, text, html };
}

/** j***@example.com: enough to recognise an address, not to learn it. */
function maskEmail(address: string): string {
  const at = address.lastIndexOf('@');
  return at <= 0 ? '***' : `${address[0]}***${address.slice(at)}`;
}

/** The mail the service sends, one builder per message (apart from the `emails` evidence table). */
export const mailTemplates = {
  verifyEmail: (to: string, name: string, token: string) =>
    message(to, 'Verify your email address', [`Hello ${name},`, 'Please confirm this is your email address.'], {
      label: 'Verify email',
      url: appLink('/verify-email', { token, email: to }),
    }),

  resetPassword: (to: string, name: string, token: string) =>
    message(
      to,
      'Reset your password',
      [
        `Hello ${name},`,
        'Someone asked to reset the password of your account. The link is valid for one hour. If it was not you, ignore this email.',
      ],
      { label: 'Reset password', url: appLink('/reset-password', { token, email: to }) },
    ),

  passwordChanged: (to: string, name: string) =>
    message(to, 'Your password was changed', [
      `Hello ${name},`,
      'The password of your account was just changed. If you did not do this, reset your password at once and contact support.',
    ]),

  /** Sent to the old address when an organization's owner or admin changed the account's login email. */
  loginEmailChanged: (to: string, name: string, organizationName: string, newEmail: string) =>
    message(to, 'The login email of your account was changed', [
      `Hello ${name},`,
      `An owner or admin of ${organizationName} changed the login email of your account from this address to ${maskEmail(newEmail)}. Every session and token of the account was ended.`,
      'If you did not expect this, contact the owners of your organization or our support at once.',
    ]),

  /**
   * A re-invite while the invitation is pending and unexpired: a reminder without a link. Only the
   * hash of the emailed token is kept, so the original link cannot be sent again, and a new token
   * would invalidate it; the resend route issues a new link.
   */
  invitationReminder: (to: string, organizationName: string, inviterName: string | null, expiresAt: Date) =>
    message(to, `Reminder: your invitation to join ${organizationName}`, [
      `${inviterName ?? 'A colleague'} reminds you of your invitation to join ${organizationName}.`,
      `Use the "Accept invitation" link of the invitation email you received earlier; it is valid until ${expiresAt.toISOString().slice(0, 10)}.`,
      `If you cannot find that email, ask ${organizationName} to resend the invitation: you will get a new link.`,
    ]),

  invitation: (
    to: string,
    organizationName: string,
    organizationId: string,
    inviterName: string | null,
    token: string,
  ) =>
    message(
      to,
      `You are invited to join ${organizationName}`,
      [
        `${inviterName ?? 'A colleague'} invited you to join ${organizationName}. The invitation is valid for one month.`,
      ],
      {
        label: 'Accept invitation',
        url: appLink('/invitations/accept', { token, email: to, organization: organizationId }),
      },
    ),

  addedToOrganization: (to: string, organizationName: string, inviterName: string | null) =>
    message(to, `You were added to ${organizationName}`, [
      `${inviterName ?? 'A colleague'} added you to ${organizationName}. It is in your list of organizations the next time you sign in.`,
    ]),

  /** Sent to the member who became owner because the account that owned the organization was taken over by the owner of its address. */
  ownershipPassed: (to: string, name: string, organizationName: string) =>
    message(to, `You are now the owner of ${organizationName}`, [
      `Hello ${name},`,
      `The account that owned ${organizationName} was taken over by the person who proved they own its email address, and it is no longer a member. As its longest-standing admin or member, you are now the owner of ${organizationName}.`,
      'The pending invitations that account sent were withdrawn. Review the members and invitations of the organization.',
    ]),

  invitationRejected: (to: string, organizationName: string, inviteeEmail: string, reason: string | null) =>
    message(to, `${inviteeEmail} declined the invitation to ${organizationName}`, [
      `${inviteeEmail} declined the invitation to join ${organizationName}.`,
      ...(reason ? [`Reason given: ${reason}`] : []),
    ]),
};
