import type { Scope } from './scopes';

/** Kinds of session: a sign-in, an automation token or a legacy token (the column reads this list). */
export const SESSION_KINDS = ['login', 'automation', 'legacy'] as const;

export type SessionKind = (typeof SESSION_KINDS)[number];

/** Who is calling: the user and the session (sign-in, automation token or legacy token). */
export interface Actor {
  user: { id: string; email: string; name: string; isSuperAdmin: boolean; isEmailVerified: boolean };
  session: { id: string; kind: SessionKind; scopes: Scope[] | null };
}
