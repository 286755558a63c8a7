import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * One writer per table: each table of lib/db/schema has one owning domain (the first folder under
 * lib/), and only that domain's files insert, update or delete its rows. Another domain that needs
 * a row changed calls the owner. This test reads the source: drizzle's `.insert(t)`, `.update(t)`,
 * `.delete(t)` on a schema table, and raw SQL `insert into t`, `update t`, `delete from t` (the
 * table named or interpolated as `${t}`). A write through a variable table (a generic batch
 * insert) is not seen.
 */

const ROOT = join(import.meta.dirname, '..', '..');

/** The owner of every table, by its SQL name. */
const TABLE_OWNERS: Record<string, string> = {
  // accounts
  users: 'users',
  email_tokens: 'users',
  // credentials
  sessions: 'auth',
  sign_in_addresses: 'auth',
  // organizations, their members and invitations
  organizations: 'organizations',
  organization_members: 'organizations',
  invitations: 'organizations',
  // plans, charges, credits, the processor's sandbox and its webhooks
  organization_plans: 'billing',
  billing_rows: 'billing',
  billing_history: 'billing',
  credit_ledger: 'billing',
  processed_webhook_events: 'billing',
  sandbox_customers: 'billing',
  sandbox_checkout_sessions: 'billing',
  sandbox_invoices: 'billing',
  // cases and who may open them
  cases: 'cases',
  case_access: 'cases',
  // evidence: devices and their notes, imports, custody, what the uploads reserve
  devices: 'material',
  device_notes: 'material',
  evidence_objects: 'material',
  evidence_imports: 'material',
  evidence_import_segments: 'material',
  extraction_codes: 'material',
  extraction_attempts: 'material',
  custody_exports: 'material',
  storage_reservations: 'material',
  emails: 'material',
  email_threads: 'material',
  attachments: 'material',
  material_profiles: 'material',
  network_conversations: 'material',
  network_messages: 'material',
  network_message_lexemes: 'material',
  support_tickets: 'material',
  // review: tags, the links that put them on evidence, tagging jobs
  tags: 'review',
  email_tags: 'review',
  network_conversation_tags: 'review',
  support_ticket_tags: 'review',
  device_note_tags: 'review',
  tagging_jobs: 'review',
  // documents the service generates and stores
  generated_documents: 'storage',
  // the audit trail
  audit_events: 'audit',
  audit_chain_heads: 'audit',
  audit_verification_checkpoints: 'audit',
  audit_read_counts: 'audit',
  idempotency_keys: 'idempotency',
  rate_limit_counters: 'rate-limit',
  email_outbox: 'mail',
  email_suppressions: 'mail',
};

interface Write {
  line: number;
  table: string;
}

/** Every .ts file under `dir`, relative to the repository root. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .map((name) =>
      relative(ROOT, join(ROOT, dir, name))
        .split('\\')
        .join('/'),
    );
}

/** The tables of lib/db/schema: the TypeScript name of each and its SQL name. */
function schemaTables(): { byIdentifier: Map<string, string>; declarations: number } {
  const byIdentifier = new Map<string, string>();
  let declarations = 0;
  for (const file of sourceFiles('lib/db/schema')) {
    const source = readFileSync(join(ROOT, file), 'utf8');
    declarations += source.match(/\bpgTable\(/g)?.length ?? 0;
    for (const [, identifier, name] of source.matchAll(/export const (\w+) = pgTable\(\s*'(\w+)'/g))
      byIdentifier.set(identifier!, name!);
  }
  return { byIdentifier, declarations };
}

/** Whole-line comments say what code does ("deletes from users ..."); they are not code. */
const isCommentLine = (line: string) => /^\s*(\/\/|\/\*|\*)/.test(line);

/** The writes in a source text, each with its line and the SQL name of its table. */
export function findWrites(source: string, byIdentifier: Map<string, string>): Write[] {
  const sqlNames = new Set(byIdentifier.values());
  const writes: Write[] = [];
  source.split('\n').forEach((text, index) => {
    if (isCommentLine(text)) return;
    const line = index + 1;
    for (const [, , identifier] of text.matchAll(/\.(insert|update|delete)\(\s*(?:\w+\.)?(\w+)\s*\)/g)) {
      const table = byIdentifier.get(identifier!);
      if (table) writes.push({ line, table });
    }
    for (const [, , interpolated, named] of text.matchAll(
      /\b(insert\s+into|update|delete\s+from)\s+(?:\$\{\s*(\w+)\s*\}|"?(\w+)"?)/gi,
    )) {
      const table = interpolated ? byIdentifier.get(interpolated) : sqlNames.has(named!) ? named : undefined;
      if (table) writes.push({ line, table });
    }
  });
  return writes;
}

/** The domain of a file: the first folder under lib/ (a file directly in lib/ belongs to none). */
const domainOf = (file: string) => {
  const parts = file.split('/');
  return parts.length > 2 ? parts[1]! : '(lib root)';
};

describe('table owners', () => {
  const { byIdentifier, declarations } = schemaTables();
  const crossing = sourceFiles('lib').flatMap((file) =>
    findWrites(readFileSync(join(ROOT, file), 'utf8'), byIdentifier)
      .filter((write) => TABLE_OWNERS[write.table] !== domainOf(file))
      .map((write) => ({ file, ...write, owner: TABLE_OWNERS[write.table] ?? '(none)' })),
  );

  it('finds drizzle and raw SQL writes, and ignores comments and other update() calls', () => {
    const tables = new Map([
      ['users', 'users'],
      ['emailTokens', 'email_tokens'],
      ['caseAccess', 'case_access'],
    ]);
    const sample = [
      'await tx.update(users).set({ name });',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to scan, not a template
      'await tx.execute(sql`delete from ${emailTokens} where user_id = ${id}`);',
      '// update users set name = null',
      "createHash('sha256').update(text);",
      'on conflict (case_id, user_id) do update set access = excluded.access',
      'insert into case_access (case_id) values ($1)',
      'tx.insert(schema.caseAccess).values(row)',
    ].join('\n');
    expect(findWrites(sample, tables)).toEqual([
      { line: 1, table: 'users' },
      { line: 2, table: 'email_tokens' },
      { line: 6, table: 'case_access' },
      { line: 7, table: 'case_access' },
    ]);
  });

  it('knows every table of lib/db/schema and names an owner for each', () => {
    expect(byIdentifier.size).toBe(declarations);
    const tables = [...byIdentifier.values()].sort();
    expect(tables.filter((table) => !(table in TABLE_OWNERS))).toEqual([]);
    expect(Object.keys(TABLE_OWNERS).filter((table) => !tables.includes(table))).toEqual([]);
  });

  it('lets only the owning domain write a table', () => {
    const offences = crossing.map(
      (write) => `${write.file}:${write.line} writes ${write.table}, owned by ${write.owner}`,
    );
    expect(offences).toEqual([]);
  });
});
