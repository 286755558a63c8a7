import * as z from 'zod/mini';

/** Email addresses are compared lowercased everywhere. */
export const Email = z.email().check(z.maxLength(254), z.toLowerCase());

export const Password = z.string().check(z.minLength(8), z.maxLength(128));

/** A person's or label's display text: trimmed, not empty. */
export const DisplayName = z.string().check(z.trim(), z.minLength(1), z.maxLength(100));

export const Id = z.uuid();

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
