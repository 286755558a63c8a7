import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/harness/global-setup.ts'],
    setupFiles: ['test/harness/setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: {
      // A fixed key for tests only; the cloud reads JWT_SECRET from Secrets Manager.
      JWT_SECRET: 'test-only-signing-key-0123456789abcdef0123456789',
      // Cheaper scrypt in tests; the cost is stored with each hash, so verification is unchanged.
      PASSWORD_HASH_LOG_N: '10',
      LOG_LEVEL: 'SILENT',
      MAIL_TRANSPORT: 'local',
      APP_URL: 'https://app.example.test',
    },
  },
});
