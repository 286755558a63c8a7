import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../lib/db/client';
import { cases } from '../../lib/db/schema/cases';
import { sendWithCommit, transaction } from '../../lib/db/transaction';
import { createCaseRow, createUser } from '../harness/actors';

/**
 * A statement sent with the COMMIT (the audit append, lib/audit/record.ts) is not awaited before
 * it on the server; it must still decide the transaction's outcome as an awaited one would.
 * PGlite has no round trip to save: sendWithCommit declines and the caller runs the statement.
 */
describe('sendWithCommit', () => {
  const runLast = async (statement: string) => {
    const owner = await createUser();
    const created = await createCaseRow(owner.organizationId, { name: 'Before' });
    const effects: string[] = [];
    const outcome = await transaction(async (tx, afterCommit) => {
      await tx.update(cases).set({ name: 'After' }).where(eq(cases.id, created.id));
      afterCommit(async () => effects.push('ran'));
      if (!sendWithCommit(tx, statement)) await tx.execute(sql.raw(statement));
      return 'done';
    }).then(
      (value) => ({ value }),
      (error: unknown) => ({ error: error as Error }),
    );
    const [row] = await db().select({ name: cases.name }).from(cases).where(eq(cases.id, created.id));
    return { outcome, effects, name: row!.name };
  };

  it('is sent ahead of COMMIT on the server, and taken up by the caller on PGlite', async () => {
    const sent = await transaction(async (tx) => sendWithCommit(tx, 'select 1'));
    expect(sent).toBe(Boolean(process.env.DATABASE_URL));
  });

  it('commits with the change when it succeeds, then runs the after-commit effects', async () => {
    const { outcome, effects, name } = await runLast('select 1');
    expect(outcome).toEqual({ value: 'done' });
    expect(effects).toEqual(['ran']);
    expect(name).toBe('After');
  });

  it('rolls the change back when it fails, throws its error, and runs no after-commit effect', async () => {
    const { outcome, effects, name } = await runLast('select 1 / 0');
    // drizzle wraps an awaited statement's error (PGlite) with the driver's as its cause.
    const error = 'error' in outcome ? outcome.error : undefined;
    expect(`${error?.message} ${(error?.cause as Error | undefined)?.message}`).toMatch(/division by zero/);
    expect(effects).toEqual([]);
    expect(name).toBe('Before');
  });

  it('declines outside transaction(): the caller runs the statement itself', async () => {
    const declined = await db().transaction(async (tx) => sendWithCommit(tx as never, 'select 1'));
    expect(declined).toBe(false);
  });
});
