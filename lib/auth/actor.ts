import type { Scope } from './scopes';

/** Who is calling: the user and the session (sign-in, automation token or legacy token). */
export interface Actor {
  user: { id: string; email: string; name: string; isSuperAdmin: boolean; isEmailVerified: boolean };
  session: { id: string; kind: 'login' | 'automation' | 'legacy'; scopes: Scope[] | null };
}
