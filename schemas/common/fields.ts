import * as z from 'zod/mini';

/**
 * What an email address may look like: zod's practical rule, with DNS labels as RFC 1035 has them
 * (1 to 63 characters, no `-` at either end) and a top-level domain of 2 to 63 letters. It is the
 * `pattern` of the API description and is stricter than every common reading of `format: email`,
 * so a client validating by the description accepts exactly what the service accepts.
 */
export const EMAIL_PATTERN =
  /^(?:[A-Za-z0-9_'+-]+\.)*[A-Za-z0-9_'+-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

/** Email addresses are compared lowercased everywhere. */
export const Email = z.email({ pattern: EMAIL_PATTERN }).check(z.maxLength(254), z.toLowerCase());

export const Password = z.string().check(z.minLength(8), z.maxLength(128));

/** A person's or label's display text: trimmed, not empty. */
export const DisplayName = z.string().check(z.trim(), z.minLength(1), z.maxLength(100));

/** An id the service answers with: a UUID. */
export const Id = z.uuid();

/** Longest id accepted as input; longer text is 400 naming the field. */
export const MAX_ID_LENGTH = 200;

/**
 * An id a client sends (path, header, query, body). The contract types ids as plain strings, so
 * any text is accepted; one that is not a UUID matches nothing (lib/ids idEquals) and gets the
 * route's not-found answer, never 400.
 */
export const IdText = z.string().check(z.minLength(1), z.maxLength(MAX_ID_LENGTH));

export const DateTime = z.iso.datetime();

/** Query flags arrive as text: 1/true and 0/false. */
export const QueryBoolean = z.pipe(
  z.enum(['true', 'false', '1', '0']),
  z.transform((value) => value === 'true' || value === '1'),
);

export const MessageEntity = z.object({ message: z.string() }).register(z.globalRegistry, { id: 'MessageEntity' });

export const MessageWithSuccessEntity = z
  .object({ message: z.string(), isSuccess: z.boolean() })
  .register(z.globalRegistry, { id: 'MessageWithSuccessEntity' });

export const EmptyEntity = z.strictObject({}).register(z.globalRegistry, { id: 'EmptyEntity' });
