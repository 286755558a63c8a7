import * as z from 'zod/mini';

/** Largest page a list answers (the contract leaves it open for most lists). */
export const MAX_PER_PAGE = 100;

const QueryInt = (min: number, max: number) =>
  z.pipe(
    z.pipe(z.string().check(z.regex(/^\d{1,9}$/, 'Expected a whole number')), z.transform(Number)),
    z.number().check(z.minimum(min), z.maximum(max)),
  );

/** Common paging query parameters: page/perPage, or skip/limit when given; sortOrder asc|desc. */
export const PagingQuery = {
  page: z.optional(QueryInt(1, 1_000_000)),
  perPage: z.optional(QueryInt(1, MAX_PER_PAGE)),
  skip: z.optional(QueryInt(0, 100_000_000)),
  limit: z.optional(QueryInt(1, MAX_PER_PAGE)),
  sortOrder: z.optional(z.enum(['asc', 'desc'])),
};

/** A number query parameter with its own bounds (for lists with other limits, e.g. 50/200). */
export { QueryInt };

/** Array query parameters arrive repeated (?a=1&a=2) or comma-separated (?a=1,2); both are accepted. */
export const QueryList = <T extends z.ZodMiniType<string, string>>(item: T, max = 100) =>
  z.pipe(
    z.union([z.string(), z.array(z.string())]),
    z.pipe(
      z.transform((value: string | string[]) =>
        (Array.isArray(value) ? value : [value])
          .flatMap((v) => v.split(','))
          .map((v) => v.trim())
          .filter(Boolean),
      ),
      z.array(item).check(z.maxLength(max)),
    ),
  );

export const PageEntity = <T extends z.ZodMiniType>(record: T) =>
  z.object({
    total: z.number(),
    page: z.optional(z.number()),
    perPage: z.optional(z.number()),
    skip: z.optional(z.number()),
    limit: z.optional(z.number()),
    totalPages: z.number(),
    nextPage: z.nullable(z.number()),
    previousPage: z.nullable(z.number()),
    data: z.nullable(z.array(record)),
  });
