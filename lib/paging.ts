import { asc, desc } from 'drizzle-orm';

export type SortOrder = 'asc' | 'desc';

export interface PagingInput {
  page?: number;
  perPage?: number;
  skip?: number;
  limit?: number;
  sortOrder?: SortOrder;
}

/** drizzle's asc or desc for the caller's `sortOrder`, the list's own default when none is sent. */
export function sortDirection(sortOrder: SortOrder | undefined, fallback: SortOrder): typeof asc {
  return (sortOrder ?? fallback) === 'asc' ? asc : desc;
}

export interface PageWindow {
  offset: number;
  size: number;
  /** How the caller asked: page/perPage or skip/limit; echoed in the Page object. */
  mode: 'page' | 'skip';
}

/** skip/limit when either is given, else page/perPage (page 1, perPage `defaultSize`). */
export function pageWindow(input: PagingInput, defaultSize = 10): PageWindow {
  if (input.skip !== undefined || input.limit !== undefined) {
    return { offset: input.skip ?? 0, size: input.limit ?? defaultSize, mode: 'skip' };
  }
  const size = input.perPage ?? defaultSize;
  return { offset: ((input.page ?? 1) - 1) * size, size, mode: 'page' };
}

export interface Page<T> {
  total: number;
  page?: number;
  perPage?: number;
  skip?: number;
  limit?: number;
  totalPages: number;
  nextPage: number | null;
  previousPage: number | null;
  data: T[] | null;
}

/**
 * The contract's Page object. `emptyAsNull`: lists whose contract says `data` is null (not [])
 * when nothing matches; a page past the end of a list that has records answers [] with the total.
 */
export function toPage<T>(
  window: PageWindow,
  total: number,
  records: T[],
  options: { emptyAsNull?: boolean } = {},
): Page<T> {
  const page = Math.floor(window.offset / window.size) + 1;
  const totalPages = Math.ceil(total / window.size);
  return {
    total,
    ...(window.mode === 'page' ? { page, perPage: window.size } : { skip: window.offset, limit: window.size }),
    totalPages,
    // From the window, not the page number: a skip/limit window need not start on a page boundary
    // (skip 2, limit 4 of 6 is the end of the list, and has records before it).
    nextPage: window.offset + window.size < total ? page + 1 : null,
    previousPage: window.offset > 0 ? Math.max(1, Math.min(page - 1, Math.max(totalPages, 1))) : null,
    data: total === 0 && options.emptyAsNull ? null : records,
  };
}
