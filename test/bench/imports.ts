import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { IMPORT_WORKER_NODE_FLAGS } from '../../infra/functions/import-worker-node-options';
import { bundleWorker } from './bundle-worker';
import { freshBenchDatabase } from './fresh-database';
import {
  type GeneratedFile,
  HOSTILE_FILES,
  type HostileFile,
  writeHostileFile,
  writeMbox,
  writeMessagesCsv,
} from './import-files';
import type { ImportWorkerResult, ImportWorkerSpec } from './import-worker';

/** Issue 17's figures, at scale 1: 100,000 messages in 1 GiB of mbox, 1,000,000 CSV rows. */
const FULL_MBOX_MESSAGES = 100_000;
const FULL_MBOX_BYTES = 1024 ** 3;
const FULL_CSV_ROWS = 1_000_000;
const TARGETS = {
  email: { itemsPerSecond: 1_000, peakRssMb: 256 },
  'professional-network': { itemsPerSecond: 10_000, peakRssMb: 256 },
} as const;
const PROFILE = 'Ann Lee';
/** Issue 29: a hostile file of 1 GiB fails MALFORMED_FILE at its third item, the worker under 256 MB. */
const FULL_HOSTILE_BYTES = 1024 ** 3;
const HOSTILE_TARGET = { peakRssMb: 256, itemIndex: 2 } as const;
const HOSTILE_KINDS: Record<HostileFile, ImportWorkerSpec['kind']> = {
  'csv-unclosed-quote': 'professional-network',
  'json-giant-string': 'chat-platform',
  'mbox-giant-header': 'email',
};

/** A hostile file's import: how it ended, how long it took to be refused, and the worker's peak RSS. */
export interface HostileRun {
  file: HostileFile;
  kind: ImportWorkerSpec['kind'];
  bytes: number;
  generateSeconds: number;
  /** The worker's outcome: `failed`, with `MALFORMED_FILE: <message>` and the item it names. */
  status: string;
  error: string | null;
  errorItemIndex: number | null;
  imported: number;
  seconds: number;
  storeSeconds: number;
  jobSeconds: number;
  peakRssMb: number;
  startRssMb: number;
  target: { code: 'MALFORMED_FILE'; itemIndex: number; peakRssMb: number };
  passed: boolean;
}

export interface ImportRun {
  kind: keyof typeof TARGETS;
  file: Omit<GeneratedFile, 'path'> & { generateSeconds: number };
  read: number;
  imported: number;
  skipped: number;
  /** The whole job path (what the rates are over): storing the file, then the job (hash, batches). */
  seconds: number;
  storeSeconds: number;
  jobSeconds: number;
  itemsPerSecond: number;
  megabytesPerSecond: number;
  peakRssMb: number;
  startRssMb: number;
  loadAverage: { before: number; after: number };
  target: { itemsPerSecond: number; peakRssMb: number };
  passed: boolean;
}

export interface ImportBenchResult {
  /** BENCH_IMPORT_SCALE: 1 is the issue's sizes; the targets are judged at any scale. */
  scale: number;
  /** Node options of the worker processes: the deployed worker's unless BENCH_IMPORT_NODE_FLAGS says otherwise. */
  nodeFlags: string[];
  /** Absent when BENCH_IMPORT_CASES leaves the export files out. */
  email?: ImportRun;
  professionalNetwork?: ImportRun;
  /** Issue 29's hostile files; absent when BENCH_IMPORT_CASES leaves them out. */
  hostile?: HostileRun[];
  passed: boolean;
  failures: string[];
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/** One import in a fresh process (the bundled import-worker.ts); its stderr (progress) passes through. */
function runWorker(
  worker: string,
  spec: ImportWorkerSpec,
  env: NodeJS.ProcessEnv,
  nodeFlags: string[],
): Promise<ImportWorkerResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...nodeFlags, worker, JSON.stringify(spec)], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.on('error', fail);
    child.on('close', (code) => {
      if (code !== 0) return fail(new Error(`${spec.kind} import worker exited with ${code}: ${stdout.trim()}`));
      done(JSON.parse(stdout.trim().split('\n').at(-1)!) as ImportWorkerResult);
    });
  });
}

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await work();
  return [result, (performance.now() - started) / 1000];
}

/**
 * Generates a 1 GiB mbox of 100,000 messages (most with an attachment, a third replies) and a
 * 1,000,000-row messages.csv (import-files.ts; `scale` shrinks both), then imports each into its
 * own fresh case of a fresh database (`cebs_bench_imports`), each in a fresh process so its peak
 * RSS is the import's own, objects in a directory as on the local server. Checks what landed in
 * the database against what was generated (a mismatch throws: the figures would mean nothing) and
 * judges items per second and peak RSS against issue 17's targets.
 */
export async function benchImports(
  adminUrl: string,
  options: { scale: number; nodeFlags?: string[]; env?: NodeJS.ProcessEnv; cases?: ImportCases },
): Promise<ImportBenchResult> {
  const { scale, nodeFlags = [], cases = importCases() } = options;
  const workDir = mkdtempSync(join(tmpdir(), 'cebs-bench-imports-'));
  try {
    const { url, connection } = await freshBenchDatabase(adminUrl, 'cebs_bench_imports');
    await connection.close();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    // A plan whose storage holds both files and every attachment: the bench measures the import, not the limit.
    const [org] =
      await sql`insert into organizations (id, name, slug, email, created_at, updated_at) values (gen_random_uuid(), 'Import Bench LLP', 'import-bench-llp', 'imports@example.com', now(), now()) returning id`;
    await sql`insert into organization_plans (id, organization_id, type, seats, devices, storage_bytes, created_at, updated_at) values (gen_random_uuid(), ${org!.id}, 'free', 5, 2, ${1024 ** 4}, now(), now())`;
    const [emailCase, networkCase, ...hostileCases] =
      await sql`insert into cases (id, organization_id, name, created_at, updated_at) select gen_random_uuid(), ${org!.id}, name, now(), now() from unnest(${['Mailbox import', 'Network export import', ...HOSTILE_FILES]}::text[]) name returning id`;

    // As on the local server: objects in a directory, no bucket, no queue; the worker's own Node flags.
    const {
      STORAGE_BUCKET: _bucket,
      IMPORT_QUEUE_URL: _queue,
      NODE_OPTIONS: _nodeOptions,
      ...inherited
    } = options.env ?? process.env;
    const env = { ...inherited, DATABASE_URL: url, DATA_DIR: join(workDir, 'data'), LOG_LEVEL: 'ERROR' };
    const worker = await bundleWorker(resolve(import.meta.dirname, 'import-worker.ts'), workDir);
    const run = async (
      kind: keyof typeof TARGETS,
      caseId: string,
      generate: (path: string) => Promise<GeneratedFile>,
      fileName: string,
      count: (caseId: string) => Promise<number>,
    ): Promise<ImportRun> => {
      console.error(`imports: writing ${fileName} (scale ${scale})`);
      const [{ path, ...file }, generateSeconds] = await timed(() => generate(join(workDir, fileName)));
      console.error(
        `imports: ${fileName} ${(file.bytes / 1024 / 1024).toFixed(0)} MB, ${file.items} items, written in ${generateSeconds.toFixed(1)} s; importing`,
      );
      const before = round(loadavg()[0] ?? 0, 2);
      const result = await runWorker(
        worker,
        { kind, caseId, file: path, ...(kind === 'professional-network' ? { profileName: PROFILE } : {}) },
        env,
        nodeFlags,
      );
      const after = round(loadavg()[0] ?? 0, 2);
      rmSync(path, { force: true });
      if (result.status !== 'succeeded') throw new Error(`${kind}: the import ended ${result.status}: ${result.error}`);
      const inDatabase = await count(caseId);
      if (result.imported !== file.items || inDatabase !== file.items)
        throw new Error(
          `${kind}: generated ${file.items} items, the import reports ${result.imported} imported (${result.read} read, ${result.skipped} skipped) and the case holds ${inDatabase}; no figures reported`,
        );
      const seconds = result.elapsedMs / 1000;
      const itemsPerSecond = round(result.imported / seconds, 0);
      const target = TARGETS[kind];
      return {
        kind,
        file: { ...file, generateSeconds: round(generateSeconds) },
        read: result.read,
        imported: result.imported,
        skipped: result.skipped,
        seconds: round(seconds),
        storeSeconds: round(result.storeMs / 1000),
        jobSeconds: round(result.jobMs / 1000),
        itemsPerSecond,
        megabytesPerSecond: round(file.bytes / 1024 / 1024 / seconds),
        peakRssMb: result.peakRssMb,
        startRssMb: result.startRssMb,
        loadAverage: { before, after },
        target,
        passed: itemsPerSecond >= target.itemsPerSecond && result.peakRssMb <= target.peakRssMb,
      };
    };

    /**
     * Issue 29: a hostile file in a fresh worker must fail MALFORMED_FILE naming its third item,
     * the two before it imported, with the worker's peak RSS within the target.
     */
    const runHostile = async (file: HostileFile, caseId: string): Promise<HostileRun> => {
      const kind = HOSTILE_KINDS[file];
      const bytes = Math.round(FULL_HOSTILE_BYTES * scale);
      console.error(`imports: writing the hostile ${file} (${(bytes / 1024 / 1024).toFixed(0)} MB)`);
      const [{ path, ...generated }, generateSeconds] = await timed(() =>
        writeHostileFile(join(workDir, file), file, bytes),
      );
      const result = await runWorker(
        worker,
        { kind, caseId, file: path, ...(kind === 'email' ? {} : { profileName: PROFILE }) },
        env,
        nodeFlags,
      );
      rmSync(path, { force: true });
      rmSync(join(workDir, 'data'), { recursive: true, force: true });
      const target = { code: 'MALFORMED_FILE', ...HOSTILE_TARGET } as const;
      return {
        file,
        kind,
        bytes: generated.bytes,
        generateSeconds: round(generateSeconds),
        status: result.status,
        error: result.error,
        errorItemIndex: result.errorItemIndex,
        imported: result.imported,
        seconds: round(result.elapsedMs / 1000),
        storeSeconds: round(result.storeMs / 1000),
        jobSeconds: round(result.jobMs / 1000),
        peakRssMb: result.peakRssMb,
        startRssMb: result.startRssMb,
        target,
        passed:
          result.status === 'failed' &&
          (result.error ?? '').startsWith(`${target.code}:`) &&
          result.errorItemIndex === target.itemIndex &&
          result.imported === target.itemIndex &&
          result.peakRssMb <= target.peakRssMb,
      };
    };

    try {
      const exports = cases.exports ? await runExports() : {};
      const hostile: HostileRun[] = [];
      if (cases.hostile)
        for (const [index, file] of HOSTILE_FILES.entries())
          hostile.push(await runHostile(file, hostileCases[index]!.id));
      const failures = [
        ...[exports.email, exports.professionalNetwork]
          .filter((r): r is ImportRun => r !== undefined && !r.passed)
          .map(
            (r) =>
              `${r.kind}: ${r.itemsPerSecond} items/s (target >= ${r.target.itemsPerSecond}), peak RSS ${r.peakRssMb} MB (target <= ${r.target.peakRssMb})`,
          ),
        ...hostile
          .filter((r) => !r.passed)
          .map(
            (r) =>
              `hostile ${r.file}: ${r.status} (${r.error ?? 'no error'}, item ${r.errorItemIndex}, ${r.imported} imported), peak RSS ${r.peakRssMb} MB (target: ${r.target.code} at item ${r.target.itemIndex}, <= ${r.target.peakRssMb} MB)`,
          ),
      ];
      return {
        scale,
        nodeFlags,
        ...exports,
        ...(cases.hostile ? { hostile } : {}),
        passed: failures.length === 0,
        failures,
      };
    } finally {
      await sql.end({ timeout: 5 });
    }

    async function runExports(): Promise<Pick<ImportBenchResult, 'email' | 'professionalNetwork'>> {
      const email = await run(
        'email',
        emailCase!.id,
        (path) =>
          writeMbox(path, {
            messages: Math.max(1, Math.round(FULL_MBOX_MESSAGES * scale)),
            targetBytes: Math.round(FULL_MBOX_BYTES * scale),
          }),
        'bench.mbox',
        async (caseId) => (await sql`select count(*)::int as n from emails where case_id = ${caseId}`)[0]!.n,
      );
      // The attachments are stored as objects: they are not needed once counted.
      const [{ n: attachmentRows } = { n: 0 }] =
        await sql`select count(*)::int as n from attachments a join emails e on e.id = a.email_id where e.case_id = ${emailCase!.id}`;
      if (attachmentRows !== email.file.attachments)
        throw new Error(`email: generated ${email.file.attachments} attachments, the case holds ${attachmentRows}`);
      rmSync(join(workDir, 'data'), { recursive: true, force: true });
      const professionalNetwork = await run(
        'professional-network',
        networkCase!.id,
        (path) => writeMessagesCsv(path, { rows: Math.max(1, Math.round(FULL_CSV_ROWS * scale)) }),
        'messages.csv',
        async (caseId) => (await sql`select count(*)::int as n from network_messages where case_id = ${caseId}`)[0]!.n,
      );
      rmSync(join(workDir, 'data'), { recursive: true, force: true });
      return { email, professionalNetwork };
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** The part's lines for the bench's stdout. */
export function importsReport(result: ImportBenchResult): string {
  const lines = [
    `\nImports, scale ${result.scale} (importLocalFile: the job path, bundled as the cloud worker, each in a fresh process${result.nodeFlags.length ? ` with ${result.nodeFlags.join(' ')}` : ''}; PostgreSQL; objects in a directory):`,
  ];
  for (const [label, r] of [
    ['mbox', result.email],
    ['messages.csv', result.professionalNetwork],
  ] as const) {
    if (!r) continue;
    const unit = r.kind === 'email' ? 'messages' : 'rows';
    lines.push(
      `  ${label}: ${r.imported.toLocaleString('en-US')} ${unit}, ${(r.file.bytes / 1024 / 1024).toFixed(0)} MB, in ${r.seconds} s (file stored in ${r.storeSeconds} s, job ${r.jobSeconds} s)`,
      `    ${r.itemsPerSecond} ${unit}/s (target >= ${r.target.itemsPerSecond})   ${r.megabytesPerSecond} MB/s   peak RSS ${r.peakRssMb} MB (target <= ${r.target.peakRssMb}; ${r.startRssMb} MB before the import)   load average ${r.loadAverage.before} -> ${r.loadAverage.after}`,
    );
  }
  if (result.email && result.professionalNetwork)
    lines.push(
      `  mbox: ${result.email.file.withAttachments} messages with attachments (${result.email.file.attachments} attachments), ${result.email.file.replies} replies; files written in ${result.email.file.generateSeconds} s and ${result.professionalNetwork.file.generateSeconds} s`,
    );
  for (const r of result.hostile ?? [])
    lines.push(
      `  hostile ${r.file}, ${(r.bytes / 1024 / 1024).toFixed(0)} MB (${r.kind}): ${r.status} ${r.error ?? ''}`,
      `    item ${r.errorItemIndex} named, ${r.imported} imported, in ${r.seconds} s (file stored in ${r.storeSeconds} s, job ${r.jobSeconds} s)   peak RSS ${r.peakRssMb} MB (target <= ${r.target.peakRssMb}; ${r.startRssMb} MB before the import)   ${r.passed ? 'met' : 'MISSED'}`,
    );
  lines.push(result.passed ? '  targets met' : `  TARGET MISSED: ${result.failures.join('; ')}`);
  return lines.join('\n');
}

/** Which imports run: the two export files (`exports`), the three hostile files (`hostile`). */
export interface ImportCases {
  exports: boolean;
  hostile: boolean;
}

/** BENCH_IMPORT_CASES: a comma-separated list of `exports`, `hostile` (default both). */
export function importCases(): ImportCases {
  const given = (process.env.BENCH_IMPORT_CASES ?? 'exports,hostile').split(',').map((c) => c.trim());
  const unknown = given.filter((c) => c !== 'exports' && c !== 'hostile');
  if (unknown.length) throw new Error(`BENCH_IMPORT_CASES takes exports and hostile, not ${unknown.join(', ')}`);
  return { exports: given.includes('exports'), hostile: given.includes('hostile') };
}

/** BENCH_IMPORT_SCALE (default 1): 0.05 imports 5,000 messages (51 MB) and 50,000 rows. */
export function importScale(): number {
  const raw = process.env.BENCH_IMPORT_SCALE;
  if (raw === undefined || raw === '') return 1;
  const scale = Number(raw);
  if (!Number.isFinite(scale) || scale <= 0)
    throw new Error(`BENCH_IMPORT_SCALE must be a positive number, got "${raw}"`);
  return scale;
}

/**
 * Node options for the worker processes: the deployed import worker's (IMPORT_WORKER_NODE_FLAGS),
 * or BENCH_IMPORT_NODE_FLAGS (empty: Node's own sizing).
 */
export function importNodeFlags(): string[] {
  const given = process.env.BENCH_IMPORT_NODE_FLAGS;
  return given === undefined ? [...IMPORT_WORKER_NODE_FLAGS] : given.split(/\s+/).filter(Boolean);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchImports(process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres', {
    scale: importScale(),
    nodeFlags: importNodeFlags(),
  });
  console.log(importsReport(result));
  console.log(JSON.stringify(result, null, 2));
  if (!result.passed) process.exitCode = 1;
}
