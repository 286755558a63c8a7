import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { createUser, userRow } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { mintAutomationToken } from '../harness/tokens';
import { describeSecurity } from '../harness/security';

const T0 = new Date('2026-11-22T10:00:00.000Z');

const patchProfile = (token: string | undefined, body: unknown) => invoke(routes.updateProfile, { token, body });

const profileOf = async (token: string) => expectData(await invoke(routes.getProfile, { token }));

describe('PATCH /user/profile', () => {
  it('updates every editable field and returns the freshly built profile', async () => {
    // Prepare
    testClock.freeze(T0);
    const user = await createUser({ name: 'Before Patch', organizationName: 'Patch Happy LLP' });
    testClock.advance(30);
    // Act
    const result = await patchProfile(user.accessToken, {
      name: '  After Patch  ',
      phoneNumbers: ['+1 (555) 010-0000', ' 555.010.0001 ', '020 7946 0000'],
      onboardingStatus: 'in_progress',
      onboardingStep: 3,
      userType: 'attorney',
    });
    // Assess: the answer
    const profile = expectData(result);
    expect(profile).toEqual({
      id: user.id,
      email: user.email,
      name: 'After Patch',
      phoneNumbers: ['+1 (555) 010-0000', '555.010.0001', '020 7946 0000'],
      isEmailVerified: false,
      onboardingStatus: 'in_progress',
      onboardingStep: 3,
      userType: 'attorney',
      createdAt: T0.toISOString(),
      updatedAt: new Date(T0.getTime() + 30_000).toISOString(),
      organizations: [
        expect.objectContaining({
          organization: expect.objectContaining({ id: user.organizationId, name: 'Patch Happy LLP' }),
          permission: { role: 'owner' },
        }),
      ],
    });
    // Assess: what was stored
    expect(await userRow(user.id)).toMatchObject({
      name: 'After Patch',
      phoneNumbers: ['+1 (555) 010-0000', '555.010.0001', '020 7946 0000'],
      onboardingStatus: 'in_progress',
      onboardingStep: 3,
      userType: 'attorney',
      email: user.email,
      isEmailVerified: false,
    });
  });

  it('drops the cached profile: a GET right after the PATCH shows the change', async () => {
    // Prepare: warm the cache through GET
    const user = await createUser({ name: 'Cached Name' });
    expect((await profileOf(user.accessToken)).name).toBe('Cached Name');
    // Act
    expectData(await patchProfile(user.accessToken, { name: 'Fresh Name', onboardingStep: 7 }));
    // Assess
    expect(await profileOf(user.accessToken)).toMatchObject({ name: 'Fresh Name', onboardingStep: 7 });
  });

  it('changes only the fields sent', async () => {
    const user = await createUser({ name: 'Partial Person' });
    expectData(
      await patchProfile(user.accessToken, {
        phoneNumbers: ['+44 20 7946 0000'],
        userType: 'expert',
        onboardingStatus: 'completed',
      }),
    );
    const result = await patchProfile(user.accessToken, { onboardingStep: 100 });
    expect(expectData(result)).toMatchObject({
      name: 'Partial Person',
      phoneNumbers: ['+44 20 7946 0000'],
      userType: 'expert',
      onboardingStatus: 'completed',
      onboardingStep: 100,
    });
    expect(await profileOf(user.accessToken)).toMatchObject({
      name: 'Partial Person',
      userType: 'expert',
      onboardingStep: 100,
    });
  });

  it('clears the user type with null and the phone numbers with an empty list', async () => {
    const user = await createUser();
    expectData(await patchProfile(user.accessToken, { userType: 'paralegal', phoneNumbers: ['555-0100'] }));
    const profile = expectData(await patchProfile(user.accessToken, { userType: null, phoneNumbers: [] }));
    expect(profile).toMatchObject({ userType: null, phoneNumbers: [] });
    expect(await userRow(user.id)).toMatchObject({ userType: null, phoneNumbers: [] });
  });

  it('answers an empty body with the unchanged profile and writes nothing', async () => {
    testClock.freeze(T0);
    const user = await createUser({ name: 'Untouched' });
    testClock.advance(30);
    const profile = expectData(await patchProfile(user.accessToken, {}));
    expect(profile).toMatchObject({ id: user.id, name: 'Untouched', updatedAt: T0.toISOString() });
    expect((await userRow(user.id)).updatedAt.toISOString()).toBe(T0.toISOString());
  });

  it.each([
    // Free text: the contract lists no values.
    [
      'any user type up to 100 characters',
      'userType',
      ['attorney', 'lawyer', 'Judge', 'in-house counsel', 'u'.repeat(100), ''],
    ],
    [
      'any onboarding status up to 100 characters',
      'onboardingStatus',
      ['not_started', 'done', 'COMPLETED', 'step-3/profile', 's'.repeat(100), ''],
    ],
    ['any onboarding step from 0 to the integer column maximum', 'onboardingStep', [0, 101, 5000, 2_147_483_647]],
    ['a 100-character name', 'name', ['n'.repeat(100)]],
    ['ten phone numbers', 'phoneNumbers', [Array.from({ length: 10 }, (_v, i) => `+1 555 010 000${i}`)]],
  ] as const)('accepts %s', async (_label, field, values) => {
    const user = await createUser();
    for (const value of values) {
      const profile = expectData(await patchProfile(user.accessToken, { [field]: value }));
      expect(profile[field]).toEqual(value);
    }
  });

  it('changes only the caller: another user keeps their profile', async () => {
    const alice = await createUser({ name: 'Alice Patches' });
    const bob = await createUser({ name: 'Bob Stays' });
    expectData(await patchProfile(alice.accessToken, { name: 'Alice Patched', userType: 'investigator' }));
    expect(await profileOf(bob.accessToken)).toMatchObject({ id: bob.id, name: 'Bob Stays', userType: null });
    expect(await userRow(bob.id)).toMatchObject({ name: 'Bob Stays', userType: null });
  });

  it('works with an automation token holding profile:write, and a profile:read token then sees the change', async () => {
    const user = await createUser();
    const writer = await mintAutomationToken(user, ['profile:write']);
    const reader = await mintAutomationToken(user, ['profile:read']);
    expect((await profileOf(reader.token)).onboardingStatus).toBe('not_started');
    expectData(await patchProfile(writer.token, { onboardingStatus: 'skipped' }));
    expect((await profileOf(reader.token)).onboardingStatus).toBe('skipped');
  });

  it.each([
    ['an empty name', { name: '' }, ['body.name']],
    ['a blank name', { name: '    ' }, ['body.name']],
    ['a 101-character name', { name: 'n'.repeat(101) }, ['body.name']],
    ['a numeric name', { name: 123 }, ['body.name']],
    ['a null name', { name: null }, ['body.name']],
    ['phone numbers as a string', { phoneNumbers: '+1 555 0100' }, ['body.phoneNumbers']],
    ['a phone number with letters', { phoneNumbers: ['555-0100', 'call me'] }, ['body.phoneNumbers.1']],
    ['a numeric phone number', { phoneNumbers: [5550100] }, ['body.phoneNumbers.0']],
    ['an oversized phone number', { phoneNumbers: ['1'.repeat(40)] }, ['body.phoneNumbers.0']],
    [
      'eleven phone numbers',
      { phoneNumbers: Array.from({ length: 11 }, (_v, i) => `555 010 00${10 + i}`) },
      ['body.phoneNumbers'],
    ],
    ['an onboarding status of 101 characters', { onboardingStatus: 's'.repeat(101) }, ['body.onboardingStatus']],
    ['a numeric onboarding status', { onboardingStatus: 3 }, ['body.onboardingStatus']],
    ['a null onboarding status', { onboardingStatus: null }, ['body.onboardingStatus']],
    ['a negative onboarding step', { onboardingStep: -1 }, ['body.onboardingStep']],
    ['an onboarding step over the integer column maximum', { onboardingStep: 2_147_483_648 }, ['body.onboardingStep']],
    ['a fractional onboarding step', { onboardingStep: 2.5 }, ['body.onboardingStep']],
    ['an onboarding step as a string', { onboardingStep: '3' }, ['body.onboardingStep']],
    ['a user type of 101 characters', { userType: 'u'.repeat(101) }, ['body.userType']],
    ['a user type of the wrong type', { userType: 7 }, ['body.userType']],
    [
      'several bad fields at once',
      { name: '', onboardingStep: -3, userType: 'u'.repeat(101) },
      ['body.name', 'body.onboardingStep', 'body.userType'],
    ],
    ['an array body', [{ name: 'Array Body' }], ['body']],
    // Text Postgres cannot store: a 500 (NUL) or silent corruption (lone surrogate) before.
    ['a name with a NUL character', { name: 'Nul\u0000Name' }, ['body.name']],
    ['a name with an unpaired surrogate', { name: 'Half \ud83d' }, ['body.name']],
  ])('answers 400 VALIDATION_FAILED naming the field for %s, and changes nothing', async (_label, body, fields) => {
    // Prepare
    const user = await createUser({ name: 'Stays The Same' });
    const before = await userRow(user.id);
    // Act
    const result = await patchProfile(user.accessToken, body);
    // Assess
    expectError(result, 400, 'VALIDATION_FAILED', fields);
    expect(await userRow(user.id)).toEqual(before);
  });

  it('answers 400 MALFORMED_JSON for a body that is not JSON', async () => {
    const user = await createUser();
    expectError(
      await invoke(routes.updateProfile, { token: user.accessToken, rawBody: '{"name":' }),
      400,
      'MALFORMED_JSON',
    );
  });

  it('answers 400 for a body sent as form data (not parsed, so it fails validation)', async () => {
    const user = await createUser();
    const result = await invoke(routes.updateProfile, {
      token: user.accessToken,
      rawBody: 'name=Form+Name',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(result.status, JSON.stringify(result.body)).toBe(400);
    expect((await userRow(user.id)).name).not.toBe('Form Name');
  });

  it('answers 401 before validating: an anonymous caller learns nothing about the input', async () => {
    expectError(await patchProfile(undefined, { onboardingStep: 'not-a-number', extra: true }), 401, 'UNAUTHENTICATED');
  });
});

describeSecurity(routes.updateProfile, {
  request: () => ({ body: { onboardingStep: 42 } }),
  // Refused requests must not have written; let-through ones must have.
  after: async ({ user }, _request, result) =>
    expect((await userRow(user.id)).onboardingStep).toBe(result.status === 200 ? 42 : 0),
  everyToken: true,
});
