import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { organizations } from '../../lib/db/schema';
import { organizationNameKey } from '../../lib/organizations/name-key';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { organizationRow } from '../harness/organizations';

/** Any organization id: validate-name declares the header required, the check does not depend on it. */
const SELECTED = '0190a4e2-0000-7000-8000-000000000000';

/** Hex digits and a fixed word: no look-alike pairs inside, so names of one run never clash by accident. */
const uniqueName = (prefix: string) => `${prefix} ${randomBytes(4).toString('hex')}`;

const create = (caller: { accessToken?: string }, name: string) =>
  invoke(routes.createOrganization, { token: caller.accessToken, body: { name } });
const rename = (caller: { accessToken?: string }, orgId: string, name: string) =>
  invoke(routes.updateOrganization, { token: caller.accessToken, path: { orgId }, body: { name } });
const validate = async (name: string) =>
  expectData(await invoke(routes.validateOrganizationName, { organization: SELECTED, body: { name } }))
    .isValid as boolean;

type Row = { id: string; name_key: string };

/** "Sable Firm" with its "a" and "e" replaced by the Cyrillic letters that look the same (U+0430, U+0435). */
const cyrillic = (name: string) => name.replace(/a/g, '\u0430').replace(/e/g, '\u0435');

const INVISIBLE = [
  ['a zero-width space', '\u200b'],
  ['a zero-width joiner', '\u200d'],
  ['a right-to-left override', '\u202e'],
  ['a left-to-right isolate', '\u2066'],
  ['a byte order mark inside', '\ufeff'],
  ['a soft hyphen', '\u00ad'],
] as const;

describe('organization names: unique once case, width, invisible characters and look-alike letters are folded', () => {
  it.each([
    ['a Cyrillic look-alike letter', cyrillic],
    [
      'full-width letters',
      (name: string) => name.replace(/[A-Za-z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)),
    ],
    ['a doubled inner space', (name: string) => name.replace(' ', '  ')],
    ['"rn" for "m"', (name: string) => name.replace('m', 'rn')],
  ])(
    'refuses a new organization whose name differs from a taken one only by %s (400 ORGANIZATION_NAME_TAKEN)',
    async (_label, variant) => {
      // Prepare
      const holder = await createUser();
      const name = uniqueName('Sable Firm');
      expectData(await create(holder, name), 201);
      const caller = await createUser();
      // Act
      const result = await create(caller, variant(name));
      // Assess
      expectError(result, 400, 'ORGANIZATION_NAME_TAKEN');
      expect(await validate(variant(name))).toBe(false);
    },
  );

  it('refuses a rename to a look-alike of a taken name, changing nothing', async () => {
    const taken = uniqueName('Harbor Legal');
    await createUser({ organizationName: taken });
    const owner = await createUser();
    const before = await organizationRow(owner.organizationId);
    expectError(await rename(owner, owner.organizationId, cyrillic(taken)), 400, 'ORGANIZATION_NAME_TAKEN');
    expect(await organizationRow(owner.organizationId)).toEqual(before);
  });

  it.each(INVISIBLE)(
    'refuses a name with %s as 400 VALIDATION_FAILED naming body.name, on create and rename, and validate-name says not valid',
    async (_label, mark) => {
      const owner = await createUser();
      const name = uniqueName('Quiet Firm').replace(' ', ` ${mark}`);
      expectError(await create(owner, name), 400, 'VALIDATION_FAILED', ['body.name']);
      expectError(await rename(owner, owner.organizationId, name), 400, 'VALIDATION_FAILED', ['body.name']);
      expect(await validate(name)).toBe(false);
    },
  );

  it('still accepts names that only look alike to nothing taken, and lets an organization restyle its own name', async () => {
    const owner = await createUser();
    const name = uniqueName('Zürich Kanzlei');
    expectData(await rename(owner, owner.organizationId, name), 201);
    // Same key: its own name in capitals and with the umlaut decomposed is still its own.
    expectData(await rename(owner, owner.organizationId, name.toUpperCase().normalize('NFD')), 201);
    expect((await organizationRow(owner.organizationId)).nameKey).toBe(organizationNameKey(name));
  });

  it('stores the key the database enforces uniqueness on', async () => {
    const owner = await createUser();
    const name = uniqueName('Keyed Firm');
    const created = expectData(await create(owner, name), 201);
    expect((await organizationRow(created.organization.id)).nameKey).toBe(organizationNameKey(name));
    const direct = db()
      .insert(organizations)
      .values({
        name: `${name} (copy)`,
        nameKey: organizationNameKey(cyrillic(name)),
        slug: `copy-${randomBytes(4).toString('hex')}`,
      });
    await expect(direct).rejects.toThrow();
  });

  it('computes the keys of rows the database gave a placeholder (before the migration, or written by SQL) before comparing names', async () => {
    // Prepare: two rows written by plain SQL, as old rows and scripts do: the column default is a placeholder.
    const name = uniqueName('Legacy Partners');
    const ids = [randomBytes(4).toString('hex'), randomBytes(4).toString('hex')];
    const inserted = (await db().execute(sql`
      insert into organizations (id, name, slug, created_at, updated_at)
      values (gen_random_uuid(), ${name}, ${`legacy-${ids[0]}`}, now(), now()),
             (gen_random_uuid(), ${name.toUpperCase()}, ${`legacy-${ids[1]}`}, now() + interval '1 second', now())
      returning id, name_key`)) as unknown as Row[] | { rows: Row[] };
    const rows = Array.isArray(inserted) ? inserted : inserted.rows;
    expect(rows.every((row) => row.name_key.startsWith('\u200b'))).toBe(true);
    // Act: any name check first replaces the placeholders.
    expect(await validate(cyrillic(name))).toBe(false);
    // Assess: the older row holds the key; the younger, same-key one keeps a key of its own.
    const [older, younger] = await Promise.all(rows.map((row) => organizationRow(row.id)));
    expect(older!.nameKey).toBe(organizationNameKey(name));
    expect(younger!.nameKey).toBe(`${organizationNameKey(name)}\u2060${younger!.id}`);
    const caller = await createUser();
    expectError(await create(caller, cyrillic(name)), 400, 'ORGANIZATION_NAME_TAKEN');
  });
});
