/** What an automation token may be granted. Each route names at most one scope it needs. */
export const SCOPES = [
  'profile:read',
  'profile:write',
  'organization:read',
  'organization:write',
  'members:write',
  'billing:read',
  'billing:write',
  'cases:read',
  'cases:write',
  'material:read',
  'notes:import',
  'material:import',
  /** Creating and changing tags, and tagging evidence (the review extension). */
  'review:write',
  'audit:read',
] as const;

export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);
