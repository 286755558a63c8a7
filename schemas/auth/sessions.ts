import * as z from 'zod/mini';
import { DateTime, Id, IdText } from '../common/fields';

/** Any string: an id that matches none of the caller's sessions is 404, never 400 (tolerant reader). */
export const SessionIdPath = z.object({ id: IdText });

export const SessionEntity = z
  .object({
    id: Id,
    kind: z.enum(['sign_in', 'legacy']),
    createdAt: DateTime,
    /** Sign-in sessions: the last refresh; legacy tokens: the last request. null until then. */
    lastUsedAt: z.nullable(DateTime),
    expiresAt: DateTime,
    /** The User-Agent and client IP of the request that created it. */
    userAgent: z.nullable(z.string()),
    ip: z.nullable(z.string()),
    /** True for the session of the bearer token of this request. */
    current: z.boolean(),
  })
  .register(z.globalRegistry, { id: 'SessionEntity' });

export const SessionList = z.array(SessionEntity);
