import { describe, expect, it } from 'vitest';
import { pinnedAccount } from '../../infra/build-app';
import { environments } from '../../infra/environments';

describe('each environment is pinned to its account', () => {
  it('every environment names its own account', () => {
    const accounts = Object.values(environments).map((settings) => settings.account);
    for (const account of accounts) expect(account).toMatch(/^\d{12}$/);
    expect(new Set(accounts).size).toBe(accounts.length);
  });

  it('synthesizes for the pinned account, and refuses another one from -c account or the credentials', () => {
    expect(pinnedAccount('prod', '333333333333', {})).toBe('333333333333');
    expect(pinnedAccount('prod', '333333333333', { context: '333333333333', credentials: '333333333333' })).toBe(
      '333333333333',
    );
    expect(() => pinnedAccount('prod', '333333333333', { context: '111111111111' })).toThrow(
      /prod is pinned to account 333333333333.*-c account is account 111111111111/,
    );
    expect(() => pinnedAccount('prod', '333333333333', { credentials: '111111111111' })).toThrow(
      /the AWS credentials is account 111111111111/,
    );
  });

  it('refuses to deploy while the committed placeholder account is in place', () => {
    expect(() => pinnedAccount('prod', environments.prod.account, { deploying: true })).toThrow(/placeholder account/);
    expect(pinnedAccount('prod', '123456789012', { deploying: true })).toBe('123456789012');
  });
});
