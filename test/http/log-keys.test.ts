import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { captureLogOutput } from '../harness/log-output';

/**
 * lib/log.ts creates the Powertools logger on the first line written; keys appended before that
 * (the request id, on every request) must be on the lines exactly as if it had existed all along.
 */

let written: string[] = [];

beforeEach(() => {
  // A fresh lib/log.ts, so its logger is not created yet.
  vi.resetModules();
  written = [];
  captureLogOutput(written);
});

afterEach(() => {
  vi.restoreAllMocks();
});

const lines = () =>
  written
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('logger keys before the first line', () => {
  it('keys appended before the first line are on it; keys removed before it are not', async () => {
    const { logger } = await import('../../lib/log');
    logger.setLogLevel('INFO');
    logger.appendKeys({ requestId: 'req-1' });
    logger.appendKeys({ route: 'GET /x', requestId: 'req-2' });
    logger.removeKeys(['route']);
    logger.info('first line');
    logger.appendKeys({ route: 'GET /y' });
    logger.info('second line');
    logger.removeKeys(['requestId', 'route']);
    logger.info('third line');

    const [first, second, third] = lines();
    expect(first).toMatchObject({ message: 'first line', requestId: 'req-2' });
    expect(first).not.toHaveProperty('route');
    expect(second).toMatchObject({ message: 'second line', requestId: 'req-2', route: 'GET /y' });
    expect(third).toMatchObject({ message: 'third line' });
    expect(third).not.toHaveProperty('requestId');
    expect(third).not.toHaveProperty('route');
  });

  it('a request that appends and removes its key and logs nothing leaves nothing for the next line', async () => {
    const { logger } = await import('../../lib/log');
    logger.appendKeys({ requestId: 'quiet-request' });
    logger.removeKeys(['requestId']);
    logger.setLogLevel('INFO');
    logger.warn('next request');

    const [line] = lines();
    expect(line).toMatchObject({ level: 'WARN', message: 'next request' });
    expect(line).not.toHaveProperty('requestId');
  });
});
