import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routeList } from '../../functions/routes';

const ROOT = join(import.meta.dirname, '../..');

/** Every handler file, as `<area>/<name>`: functions/<area>/<name>.ts (functions/routes.ts is the table, not a route). */
function handlerNames(): string[] {
  return readdirSync(join(ROOT, 'functions'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((area) =>
      readdirSync(join(ROOT, 'functions', area.name))
        .filter((name) => name.endsWith('.ts'))
        .map((name) => `${area.name}/${name.slice(0, -'.ts'.length)}`),
    )
    .sort();
}

/** The operation id of the entry whose handler is functions/<area>/<name>.ts. */
const operationIdOf = (name: string) =>
  routeList.find((route) => route.handler === `functions/${name}.ts`)?.operationId;

// The README's rule: a route's tests live in test/<area>/<name>.test.ts, next to where a reader looks
// for them. Topic files may hold more, but each route keeps a file of its own that exercises it.
describe('tests that mirror the routes', () => {
  it('finds the handler files', () => {
    expect(handlerNames().length).toBe(routeList.length);
  });

  it('has test/<area>/<name>.test.ts for every functions/<area>/<name>.ts', () => {
    const missing = handlerNames().filter((name) => !existsSync(join(ROOT, 'test', `${name}.test.ts`)));
    expect(missing, 'routes without test/<area>/<name>.test.ts').toEqual([]);
  });

  it("has each route's test file invoke that route (routes.<operationId>)", () => {
    const silent = handlerNames().filter((name) => {
      const file = join(ROOT, 'test', `${name}.test.ts`);
      if (!existsSync(file)) return false; // named by the test above
      const operationId = operationIdOf(name);
      return operationId === undefined || !new RegExp(`\\broutes\\.${operationId}\\b`).test(readFileSync(file, 'utf8'));
    });
    expect(silent, 'route test files that never name routes.<operationId>').toEqual([]);
  });
});
