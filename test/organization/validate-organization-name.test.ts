import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke, type InvokeOptions } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

/** Any organization id: the contract declares the header required, the check does not depend on it. */
const SELECTED = '0190a4e2-0000-7000-8000-000000000000';

const validate = (body: unknown, options: InvokeOptions = {}) =>
  invoke(routes.validateOrganizationName, { organization: SELECTED, body, ...options });

const uniqueName = (prefix: string) => `${prefix} ${randomBytes(4).toString('hex')}`;

describe('POST /organization/validate-name', () => {
  it('answers isValid true for a free name, without authentication', async () => {
    const data = expectData(await validate({ name: uniqueName('Free Name') }));
    expect(data).toEqual({ isValid: true });
  });

  it.each([
    ['as written', (name: string) => name],
    ['in upper case', (name: string) => name.toUpperCase()],
    ['in lower case', (name: string) => name.toLowerCase()],
    ['with spaces around', (name: string) => `   ${name} `],
  ])('answers isValid false for a taken name %s', async (_label, variant) => {
    const name = uniqueName('Taken Firm');
    await createUser({ organizationName: name });
    expect(expectData(await validate({ name: variant(name) }))).toEqual({ isValid: false });
  });

  it('does not confuse a name with one that merely contains it or shares its slug', async () => {
    const name = uniqueName('Prefix Firm');
    await createUser({ organizationName: name });
    expect(expectData(await validate({ name: `${name} II` }))).toEqual({ isValid: true });
    expect(expectData(await validate({ name: name.slice(0, -1) }))).toEqual({ isValid: true });
    expect(expectData(await validate({ name: name.replace(' ', '-') }))).toEqual({ isValid: true });
  });

  it('follows renames: the old name is free again and the new one taken', async () => {
    const oldName = uniqueName('Old Firm');
    const newName = uniqueName('New Firm');
    const owner = await createUser({ organizationName: oldName });
    expect(expectData(await validate({ name: oldName }))).toEqual({ isValid: false });
    expectData(
      await invoke(routes.updateOrganization, {
        token: owner.accessToken,
        path: { orgId: owner.organizationId },
        body: { name: newName },
      }),
      201,
    );
    expect(expectData(await validate({ name: oldName }))).toEqual({ isValid: true });
    expect(expectData(await validate({ name: newName.toUpperCase() }))).toEqual({ isValid: false });
  });

  it('answers the same to a signed-in caller', async () => {
    const name = uniqueName('Signed In');
    const caller = await createUser({ organizationName: name });
    const data = expectData(
      await validate({ name }, { token: caller.accessToken, organization: caller.organizationId }),
    );
    expect(data).toEqual({ isValid: false });
  });

  it.each([
    ['missing', {}, 'The organization header is required'],
    ['over 200 characters', { organization: 'o'.repeat(201) }, 'Must be an organization id of at most 200 characters'],
  ])('answers 400 naming headers.organization when the header is %s', async (_label, headers, message) => {
    const result = await invoke(routes.validateOrganizationName, { body: { name: uniqueName('Header') }, headers });
    expectError(result, 400, 'VALIDATION_FAILED', ['headers.organization']);
    expect(result.body.error.details).toEqual([{ path: 'headers.organization', message }]);
  });

  it.each([
    ['no name', {}, ['body.name']],
    ['an empty name', { name: '' }, ['body.name']],
    ['a blank name', { name: '   ' }, ['body.name']],
    ['a name over 100 characters', { name: 'n'.repeat(101) }, ['body.name']],
    ['a number', { name: 12 }, ['body.name']],
    ['a list', { name: ['Acme'] }, ['body.name']],
    ['a name with a NUL character', { name: 'Acme\u0000' }, ['body.name']],
  ])('answers 400 VALIDATION_FAILED naming the field for %s', async (_label, body, fields) => {
    expectError(await validate(body), 400, 'VALIDATION_FAILED', fields);
  });

  it('answers 400 MALFORMED_JSON for a body that is not JSON', async () => {
    expectError(
      await invoke(routes.validateOrganizationName, { organization: SELECTED, rawBody: '{"name":' }),
      400,
      'MALFORMED_JSON',
    );
  });
});

describeSecurity(routes.validateOrganizationName, {
  request: () => ({ organization: SELECTED, body: { name: uniqueName('Secured') } }),
});
