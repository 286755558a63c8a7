import { randomUUID } from 'node:crypto';
import { Presets, SingleBar } from 'cli-progress';
import { STAFF_ACTOR, withAuditScope } from '../audit/scope';
import { type ChainVerification, organizationsWithAuditEvents, verifyAuditChain } from '../audit/verify';
import { grantCredits } from '../billing/admin';
import { verifyBilling } from '../billing/verify';
import { IMPORT_KINDS, type ImportKind } from '../material/importers/batch';
import type { ImportRow } from '../material/imports/jobs';
import { importLocalFile } from '../material/imports/local-file';
import { drainLocalImports, useLocalImportRunner } from '../material/imports/queue';
import { runImport } from '../material/imports/run';
import { closeDb, connectDb } from '../db/client';
import { DomainError } from '../errors';
import { migrateDatabase } from '../db/migrate';
import { describeMaintenance, runMaintenance } from '../maintenance';
import { setSuperAdmin } from '../users/super-admins';

const USAGE = `Usage: npm run admin -- <command>

  super-admin grant <email>    make a user a super admin
  super-admin revoke <email>   take super admin away
  credits grant <organizationId> <cents> <reason...>
                               add prepaid credits (negative cents take them back)
  billing verify [organizationId]
                               recompute balances, ledger chains, charges and sandbox invoices
                               from the rows; exit 1 listing each difference
  audit verify [organizationId]
                               recompute the audit hash chain of one organization (all with
                               events when omitted), one line each; exit 1 when any is broken
  import email --case <caseId> <file.mbox|file.eml>
  import professional-network --case <caseId> --profile <name> <messages.csv>
  import chat-platform --case <caseId> --profile <name> <tickets.json>
                               add evidence to a case as an import job run here, with a progress
                               bar on a terminal (re-importing adds nothing twice); the file is
                               kept as the case's source evidence
  maintenance run              deliver due emails, prune rate-limit windows and old idempotency
                               answers, create missing processor customers, retry charges and
                               voided invoices, requeue stalled imports, remove lapsed uploads
                               and expired generated documents, re-verify audit chains a
                               bounded batch at a time; prints each count

Works on DATABASE_URL, or on the PGlite in DATA_DIR (stop \`npm start\` first: one process owns that directory).`;

/**
 * Runs one admin command; returns the process exit code. What it changes is recorded in the audit
 * trail as done by staff (never naming who), with a request id of its own per command.
 */
export function runAdminCommand(argv: string[], print: (line: string) => void = console.log): Promise<number> {
  return withAuditScope({ actor: STAFF_ACTOR, ip: null, userAgent: null, requestId: randomUUID() }, () =>
    dispatch(argv, print),
  );
}

async function dispatch(argv: string[], print: (line: string) => void): Promise<number> {
  // Plain positionals: a negative amount of credits must not be read as an option.
  const positionals = argv;
  const [area, action, subject] = positionals;
  if (area === 'super-admin' && (action === 'grant' || action === 'revoke') && subject) {
    const found = await setSuperAdmin(subject, action === 'grant');
    print(
      found ? `${subject}: super admin ${action === 'grant' ? 'granted' : 'revoked'}` : `No user with email ${subject}`,
    );
    return found ? 0 : 1;
  }
  if (
    area === 'credits' &&
    action === 'grant' &&
    subject &&
    /^-?\d+$/.test(positionals[3] ?? '') &&
    positionals.length > 4
  ) {
    const balance = await grantCredits(subject, Number(positionals[3]), positionals.slice(4).join(' '));
    print(balance === null ? `No organization ${subject}` : `credits: balance of ${subject} is now ${balance} cents`);
    return balance === null ? 1 : 0;
  }
  if (area === 'billing' && action === 'verify' && positionals.length <= 3) {
    const { organizationsChecked, differences } = await verifyBilling(subject);
    if (subject !== undefined && organizationsChecked === 0) {
      print(`No organization ${subject}`);
      return 1;
    }
    if (differences.length === 0) {
      print(`billing verify: OK, ${organizationsChecked} organization(s) checked, no difference`);
      return 0;
    }
    for (const d of differences)
      print(`${d.organizationId} ${d.check}: expected ${d.expected}, actual ${d.actual} (${d.detail})`);
    const affected = new Set(differences.map((d) => d.organizationId)).size;
    print(
      `billing verify: ${differences.length} difference(s) in ${affected} of ${organizationsChecked} organization(s)`,
    );
    return 1;
  }
  if (area === 'audit' && action === 'verify' && positionals.length <= 3) {
    const organizationIds = subject === undefined ? await organizationsWithAuditEvents() : [subject];
    if (organizationIds.length === 0) print('audit verify: no organization has audit events');
    let broken = 0;
    for (const organizationId of organizationIds) {
      const result = await verifyAuditChain(organizationId);
      // Every organization records events from its start: one with neither events nor a head is unknown.
      if (result.checkedEvents === 0 && result.headSequence === 0) {
        print(`No audit events for organization ${organizationId}`);
        return 1;
      }
      if (!result.valid) broken += 1;
      print(auditVerifyLine(organizationId, result));
    }
    return broken > 0 ? 1 : 0;
  }
  if (area === 'import' && isImportKind(action)) {
    const { flags, rest } = splitFlags(positionals.slice(2));
    const file = rest[0];
    if (!flags.case || !file || (action !== 'email' && !flags.profile)) {
      print(USAGE);
      return 2;
    }
    const progress = importProgress(action, print);
    const done = await importLocalFile(
      { kind: action, caseId: flags.case, file, ...(flags.profile ? { profileName: flags.profile } : {}) },
      { onProgress: progress.update },
    ).finally(progress.stop);
    if (done.status === 'failed') {
      print(`import ${action} failed: ${done.errorCode}: ${done.errorMessage} (${importCounts(done)})`);
      return 1;
    }
    print(`import ${action}: ${importCounts(done)}`);
    return 0;
  }
  if (area === 'maintenance' && action === 'run') {
    print(`maintenance done: ${describeMaintenance(await runMaintenance())}`);
    return 0;
  }
  print(USAGE);
  return 2;
}

const isImportKind = (value: string | undefined): value is ImportKind =>
  (IMPORT_KINDS as readonly (string | undefined)[]).includes(value);

const importCounts = (row: ImportRow) =>
  `${row.itemsRead} read, ${row.itemsImported} imported, ${row.itemsSkipped} already there`;

/**
 * The progress of a foreground import: a bar on a terminal (bytes of the file, items so far),
 * nothing on a pipe or in a log, where only the summary line is printed.
 */
function importProgress(kind: ImportKind, print: (line: string) => void) {
  if (!process.stderr.isTTY || print !== console.log) return { update: (_row: ImportRow) => {}, stop: () => {} };
  const bar = new SingleBar(
    {
      format: `import ${kind} [{bar}] {percentage}% | {itemsRead} read, {itemsImported} imported | {eta_formatted} left`,
      stream: process.stderr,
      hideCursor: true,
    },
    Presets.shades_classic,
  );
  let started = false;
  return {
    update: (row: ImportRow) => {
      const counts = { itemsRead: row.itemsRead, itemsImported: row.itemsImported };
      if (!started) bar.start(row.sizeBytes, 0, counts);
      started = true;
      bar.update(row.status === 'succeeded' ? row.sizeBytes : row.bytesRead, counts);
    },
    stop: () => bar.stop(),
  };
}

function auditVerifyLine(organizationId: string, result: ChainVerification): string {
  const head = `head ${result.headSequence} ${result.headHash}`;
  return result.valid
    ? `${organizationId} OK: ${result.checkedEvents} event(s), ${head}`
    : `${organizationId} BROKEN at sequence ${result.firstInvalidSequence}: ${result.checkedEvents} event(s) checked, ${head}`;
}

/** `--name value` pairs and the remaining positionals. */
function splitFlags(args: string[]): { flags: Record<string, string | undefined>; rest: string[] } {
  const flags: Record<string, string | undefined> = {};
  const rest: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg.startsWith('--')) flags[arg.slice(2)] = args[++i];
    else rest.push(arg);
  }
  return { flags, rest };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { db, driver } = await connectDb();
  await migrateDatabase(db, driver);
  // Imports maintenance sends again run here, in the foreground.
  useLocalImportRunner(runImport);
  let code = 2;
  try {
    code = await runAdminCommand(process.argv.slice(2));
  } catch (error) {
    // A refusal the API would answer with a 4xx (a storage limit, an unknown case) is a message, not a crash.
    if (!(error instanceof DomainError)) throw error;
    console.error(`${error.code}: ${error.message}`);
    code = 1;
  } finally {
    await drainLocalImports();
    await closeDb();
  }
  process.exit(code);
}
