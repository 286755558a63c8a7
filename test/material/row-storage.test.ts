import { createReadStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, inject, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { rawRows } from '../../lib/db/raw-rows';
import { cases } from '../../lib/db/schema';
import {
  FILE_START,
  importEmailFile,
  importNetworkMessagesCsv,
  importNetworkMessagesStream,
  importSupportTicketsJson,
  type StreamImportOptions,
} from '../../lib/material/importers';
import { ROW_OVERHEAD_BYTES, type RowKind } from '../../lib/material/importers/run-batches';
import { ownDataDir } from '../harness/data-dir';
import { expectData, expectError, invoke } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { caseWithOwner } from '../harness/cases';
import { importNotesOf } from '../harness/material';
import { setPlanStorage } from '../harness/plans';

/**
 * Issue 29, item 5: the rows derived from a case's files count in its storage (their stored text
 * plus a fixed per-item overhead), as each batch commits, under the plan's storage cap.
 */

const dataDir = ownDataDir('row-storage-');

type Setup = Awaited<ReturnType<typeof caseWithOwner>>;

const write = (name: string, content: string) => {
  const path = join(dataDir.path, `${Math.random().toString(36).slice(2)}-${name}`);
  writeFileSync(path, content);
  return path;
};

const pad = (n: number) => String(n).padStart(6, '0');

/** `n` messages.csv rows of the same width. */
const csv = (n: number, tag = 'a') =>
  [
    'CONVERSATION ID,CONVERSATION TITLE,FROM,TO,DATE,SUBJECT,CONTENT,FOLDER',
    ...Array.from(
      { length: n },
      (_, i) => `c${pad(i % 50)},Offer,Ann Lee,Bob Roe,2026-11-02 10:00:00 UTC,Offer,${tag}${pad(i)} terms,INBOX`,
    ),
  ].join('\n');

/** `n` small messages in an mbox, ten to a thread. */
const mbox = (n: number) =>
  Array.from({ length: n }, (_, i) => {
    const root = `t${pad(Math.floor(i / 10))}@lee-law.example`;
    const threading = i % 10 === 0 ? '' : `In-Reply-To: <${root}>\nReferences: <${root}>\n`;
    const id = i % 10 === 0 ? root : `m${pad(i)}@lee-law.example`;
    return `From ann@lee-law.example Mon Nov  2 10:00:00 2026\nMessage-ID: <${id}>\n${threading}Date: Mon, 02 Nov 2026 10:00:00 +0000\nFrom: Ann Lee <ann@lee-law.example>\nTo: Bob Roe <bob@roe.example>\nSubject: Offer ${pad(i)}\n\nWe offer terms ${pad(i)}.\n\n`;
  }).join('');

/** `n` support tickets. */
const tickets = (n: number) =>
  JSON.stringify(
    Array.from({ length: n }, (_, i) => ({
      id: 1000 + i,
      subject: `Refund ${pad(i)}`,
      status: 'closed',
      created_at: '2026-11-01T10:00:00Z',
      comments: [{ author: 'Ann', body: `Please refund order ${pad(i)}.`, created_at: '2026-11-01T10:05:00Z' }],
    })),
  );

const notes = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({
    id: from + i,
    title: `Note ${pad(from + i)}`,
    htmlContent: `<p>Met Bob about the offer ${pad(from + i)}.</p>`,
  }));

const bytesOf = async (caseId: string) =>
  (
    await db().select({ rows: cases.rowBytes, objects: cases.storageBytes }).from(cases).where(eq(cases.id, caseId))
  )[0]!;

const storageUsed = async (s: Setup) =>
  expectData(
    await invoke(routes.getOrganizationUsage, { token: s.owner.accessToken, path: { orgId: s.organizationId } }),
  ).storageUsed as number;

function streamOf(s: Setup, file: string, extra: Partial<StreamImportOptions> = {}): StreamImportOptions {
  return {
    target: {
      caseId: s.caseId,
      organizationId: s.organizationId,
      importSource: 'messages.csv',
      importedById: s.owner.id,
      profileName: 'ann.lee',
    },
    open: async (start) => createReadStream(file, { start }),
    from: FILE_START,
    ...extra,
  };
}

describe("rows count in the case's storage", () => {
  it.each([
    [
      'network messages',
      'networkMessage',
      (s: Setup) => importNetworkMessagesCsv(s.caseId, write('m.csv', csv(300)), 'p'),
    ],
    ['emails', 'email', (s: Setup) => importEmailFile(s.caseId, write('m.mbox', mbox(300)))],
    [
      'support tickets',
      'supportTicket',
      (s: Setup) => importSupportTicketsJson(s.caseId, write('t.json', tickets(300)), 'p'),
    ],
  ] as const)('%s: stored text plus the per-item overhead, once per item', async (_, kind, run) => {
    // Prepare
    const s = await caseWithOwner();
    // Act
    expect(await run(s)).toMatchObject({ imported: 300 });
    // Assess: every item's overhead and some text; the usage shows it
    const { rows } = await bytesOf(s.caseId);
    expect(rows).toBeGreaterThan(300 * ROW_OVERHEAD_BYTES[kind as RowKind] + 300 * 20);
    expect(await storageUsed(s)).toBe(rows);
    // Importing the same file again adds no item, and counts nothing more
    expect(await run(s)).toMatchObject({ imported: 0, skipped: 300 });
    expect((await bytesOf(s.caseId)).rows).toBe(rows);
  });

  it('device notes: stored text plus the per-item overhead, once per note', async () => {
    const s = await caseWithOwner();
    expectData(await importNotesOf(s, notes(50)));
    const { rows } = await bytesOf(s.caseId);
    expect(rows).toBeGreaterThan(50 * ROW_OVERHEAD_BYTES.deviceNote + 50 * 20);
    expect(await storageUsed(s)).toBe(rows);
    expectData(await importNotesOf(s, notes(50)));
    expect((await bytesOf(s.caseId)).rows).toBe(rows);
  });

  it('refuses notes whose rows do not fit: 403 STORAGE_LIMIT_REACHED, nothing imported', async () => {
    const s = await caseWithOwner();
    await setPlanStorage(s.organizationId, 100);
    expectError(await importNotesOf(s, notes(5)), 403, 'STORAGE_LIMIT_REACHED');
    expect((await bytesOf(s.caseId)).rows).toBe(0);
  });
});

describe('the storage cap, batch by batch', () => {
  it('fails the import with STORAGE_LIMIT_REACHED once a batch does not fit, keeping the batches before it', async () => {
    // Prepare: what ten rows of this width count, learned on another case
    const probe = await caseWithOwner();
    await importNetworkMessagesStream(streamOf(probe, write('probe.csv', csv(10, 'p'))));
    const perBatch = (await bytesOf(probe.caseId)).rows;
    const s = await caseWithOwner();
    await setPlanStorage(s.organizationId, Math.floor(2.5 * perBatch));
    const batches: number[] = [];
    // Act: 50 rows in batches of 10
    const refused = await importNetworkMessagesStream(
      streamOf(s, write('m.csv', csv(50)), {
        batchSize: 10,
        onBatch: async (_tx, batch) => {
          batches.push(batch.next.itemIndex);
        },
      }),
    ).catch((error: unknown) => error);
    // Assess
    expect(refused).toMatchObject({ code: 'STORAGE_LIMIT_REACHED' });
    expect((refused as Error).message).toMatch(/storage limit is reached/);
    expect(batches).toEqual([10, 20]);
    expect((await bytesOf(s.caseId)).rows).toBe(2 * perBatch);
  });

  it('writes a batch in a fixed number of statements whatever its size', async () => {
    const s = await caseWithOwner();
    await importNetworkMessagesStream(streamOf(s, write('w.csv', csv(5, 'w'))));
    const small = await countQueries(() =>
      importNetworkMessagesStream(streamOf(s, write('s.csv', csv(10, 's')), { batchSize: 1_000 })),
    );
    const large = await countQueries(() =>
      importNetworkMessagesStream(streamOf(s, write('l.csv', csv(400, 'l')), { batchSize: 1_000 })),
    );
    expect(large.queries).toBe(small.queries);
  });
});

/**
 * The per-item overhead, measured (MEASURE_ROW_OVERHEAD=1, on the PostgreSQL server): the growth of
 * the evidence tables and their indexes (pg_total_relation_size) over N items of each kind, less
 * their stored text, per item. docs/decisions.md has the figures.
 */
describe.runIf(process.env.MEASURE_ROW_OVERHEAD && inject('databaseTemplate').kind === 'postgres')(
  'per-item overhead (measurement)',
  () => {
    const TABLES = [
      'emails',
      'email_threads',
      'attachments',
      'evidence_objects',
      'network_messages',
      'network_conversations',
      'network_message_lexemes',
      'support_tickets',
      'device_notes',
      'material_profiles',
      'audit_events',
    ];
    const totalSize = async () => {
      await db().execute(sql.raw('checkpoint'));
      const rows = await rawRows<{ n: string }>(
        db(),
        sql.raw(
          `select sum(pg_total_relation_size(c))::bigint as n from unnest(array['${TABLES.join("','")}']::regclass[]) as c`,
        ),
      );
      return Number(rows[0]!.n);
    };
    const N = 5_000;
    const measure = async (kind: RowKind, run: (s: Setup) => Promise<unknown>) => {
      const s = await caseWithOwner();
      const before = await totalSize();
      await run(s);
      const after = await totalSize();
      const text = (await bytesOf(s.caseId)).rows - N * ROW_OVERHEAD_BYTES[kind];
      const overhead = (after - before - text) / N;
      console.log(
        `${kind}: ${N} items, +${after - before} bytes of tables and indexes, ${text} bytes of stored text: ${overhead.toFixed(0)} bytes per item`,
      );
    };
    it('measures', { timeout: 600_000 }, async () => {
      await measure('networkMessage', (s) => importNetworkMessagesCsv(s.caseId, write('m.csv', csv(N)), 'p'));
      await measure('email', (s) => importEmailFile(s.caseId, write('m.mbox', mbox(N))));
      await measure('supportTicket', (s) => importSupportTicketsJson(s.caseId, write('t.json', tickets(N)), 'p'));
      await measure('deviceNote', async (s) => {
        for (let from = 0; from < N; from += 1_000) expectData(await importNotesOf(s, notes(1_000, from)));
      });
    });
  },
);
