import * as z from 'zod/mini';
import { SCOPES } from '../../lib/auth/scopes';
import { DateTime, DisplayName, Id } from '../common/fields';

export const MAX_AUTOMATION_TOKEN_TTL_DAYS = 400;

export const ScopeEnum = z.enum(SCOPES);

export const GenerateTokenDto = z
  .strictObject({
    scopes: z.optional(z.array(ScopeEnum).check(z.maxLength(SCOPES.length * 4))),
    label: z.optional(DisplayName),
    ttlDays: z.optional(z.int().check(z.minimum(1), z.maximum(MAX_AUTOMATION_TOKEN_TTL_DAYS))),
  })
  .register(z.globalRegistry, { id: 'GenerateTokenDto' });

/** An empty request (no body at all) asks for a legacy token, like `{}`. */
export const GenerateTokenBody = z._default(GenerateTokenDto, {});

export const UpdateTokenScopesDto = z
  .strictObject({ scopes: z.array(ScopeEnum).check(z.maxLength(SCOPES.length * 4)) })
  .register(z.globalRegistry, { id: 'UpdateTokenScopesDto' });

export const TokenIdPath = z.object({ id: Id });

export const AutomationTokenListEntity = z
  .object({
    id: Id,
    label: z.nullable(z.string()),
    scopes: z.array(ScopeEnum),
    lastUsedAt: z.nullable(DateTime),
    expiresAt: DateTime,
    revoked: z.boolean(),
    createdAt: DateTime,
  })
  .register(z.globalRegistry, { id: 'AutomationTokenListEntity' });

export const AutomationTokenList = z.array(AutomationTokenListEntity);

export const GenerateTokenResponseEntity = z
  .union([
    z.object({ token: z.string(), id: Id, label: z.nullable(z.string()), scopes: z.array(ScopeEnum), expiresAt: DateTime }),
    z.object({ token: z.string(), validTill: DateTime }),
  ])
  .register(z.globalRegistry, { id: 'GenerateTokenResponseEntity' });

export type GenerateTokenDto = z.infer<typeof GenerateTokenDto>;
