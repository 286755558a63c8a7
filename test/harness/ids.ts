/** A well-formed id (UUIDv7) that no row carries: what a guess or a deleted row's id looks like. */
export const UNKNOWN_ID = '0190a4e2-0000-7000-8000-000000000000';
