import * as z from 'zod/mini';
import { SCOPES } from '../../lib/auth/scopes';
import { DateTime, DisplayName, Id, IdText } from '../common/fields';

/** The longest automation token lifetime (lib/auth/automation-tokens.ts MAX_TTL_DAYS caps to it). */
export const MAX_AUTOMATION_TOKEN_TTL_DAYS = 400;

export const ScopeEnum = z.enum(SCOPES);

export const GenerateTokenDto = z
  .object({
    // An empty list is the domain's 400 UNSUPPORTED_SCOPE (lib/auth/automation-tokens.ts); the description says so as minItems.
    scopes: z.optional(
      z
        .array(ScopeEnum)
        .check(z.maxLength(SCOPES.length * 4))
        .register(z.globalRegistry, { minItems: 1, description: 'At least one scope; without scopes, a legacy token' }),
    ),
    label: z.optional(DisplayName),
    // "Never more than 400 days" is a cap on the lifetime, not a refusal: more is lowered to 400 (lib/auth/automation-tokens.ts).
    ttlDays: z.optional(
      z
        .int()
        .check(z.minimum(1))
        .register(z.globalRegistry, {
          description: `Lifetime in days; above ${MAX_AUTOMATION_TOKEN_TTL_DAYS} is capped at ${MAX_AUTOMATION_TOKEN_TTL_DAYS}`,
        }),
    ),
  })
  .register(z.globalRegistry, { id: 'GenerateTokenDto' });

/** An empty request (no body at all) asks for a legacy token, like `{}`. */
export const GenerateTokenBody = z._default(GenerateTokenDto, {});

export const UpdateTokenScopesDto = z
  .object({ scopes: z.array(ScopeEnum).check(z.maxLength(SCOPES.length * 4)) })
  .register(z.globalRegistry, { id: 'UpdateTokenScopesDto' });

export const TokenIdPath = z.object({ id: IdText });

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
    z.object({
      token: z.string(),
      id: Id,
      label: z.nullable(z.string()),
      scopes: z.array(ScopeEnum),
      expiresAt: DateTime,
    }),
    z.object({ token: z.string(), validTill: DateTime }),
  ])
  .register(z.globalRegistry, { id: 'GenerateTokenResponseEntity' });

export type GenerateTokenDto = z.infer<typeof GenerateTokenDto>;
