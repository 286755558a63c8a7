import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routeList } from '../../functions/routes';
import { AUDIT_ACTIONS } from '../../lib/audit';

/**
 * The route table is where every route says what it writes to the audit trail; the security suite
 * (test/harness/security.ts) then proves, route by route, that a successful request writes exactly
 * that action and a refused or failed one writes nothing. This file checks the table itself and that
 * every auditing route is under that suite.
 */

const TEST_ROOT = join(import.meta.dirname, '..');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? testFiles(join(dir, entry.name))
      : entry.name.endsWith('.test.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Operation ids with a security suite: `describeSecurity(routes.x, …)` or `describeSecurity(x, …)` on the handler. */
const underSecuritySuite = new Set(
  testFiles(TEST_ROOT).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/describeSecurity\((?:routes\.)?(\w+)/g)].map((match) => match[1]!),
  ),
);

describe('audit actions in the route table', () => {
  it.each(routeList.filter((route) => route.method !== 'GET').map((route) => [route.operationId, route] as const))(
    '%s (a write) says what it records, or why nothing',
    (_name, route) => {
      expect(route.audit).toBeDefined();
      if (route.audit && 'none' in route.audit) expect(route.audit.none.length).toBeGreaterThan(10);
    },
  );

  it.each(
    routeList
      .filter((route) => route.audit && 'action' in route.audit)
      .map((route) => [route.operationId, route] as const),
  )('%s is under the security suite, which checks its audit event', (name, route) => {
    expect(underSecuritySuite.has(name)).toBe(true);
    if (route.audit && 'action' in route.audit) expect(Object.keys(AUDIT_ACTIONS)).toContain(route.audit.action);
  });

  it('names reads only on GET routes of case evidence, which have a case rule', () => {
    const reads = routeList.filter((route) => route.audit && 'read' in route.audit);
    expect(reads.length).toBeGreaterThan(0);
    for (const route of reads) {
      expect(route.method, route.operationId).toBe('GET');
      expect(route.case, route.operationId).toBeDefined();
    }
  });

  it('uses stable dotted lowercase names, each described', () => {
    for (const [action, meaning] of Object.entries(AUDIT_ACTIONS)) {
      expect(action).toMatch(/^[a-z]+(\.[a-z_]+)+$/);
      expect(meaning.length).toBeGreaterThan(10);
    }
  });
});
