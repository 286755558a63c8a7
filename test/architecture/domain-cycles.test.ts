import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The domains (folders under lib/) import each other without cycles, but for the few edges
 * listed in UPWARD_EDGES. A cycle between folders means neither can be understood, tested or
 * moved without the other.
 *
 * What counts as an edge: a runtime import, re-export or dynamic import() from a file of one
 * domain to a file of another. Type-only imports (`import type`, or named imports that are all
 * `type`) are left out: the compiler erases them, so they load nothing and order nothing; they
 * share vocabulary (Actor, OrganizationContext, OrganizationRole) rather than behaviour.
 * lib/db is left out too: every domain writes through it, and its schema reads the domains'
 * enumerations (roles, statuses) by design, as schemas/** does. Files directly in lib/ (clock,
 * config, ids, maintenance) are shared utilities or composition roots, not a domain.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const NOT_DOMAINS = new Set(['db']);

/**
 * Edges that still close a cycle, each with why. Everything else must form a graph without
 * cycles; an entry that no longer names an edge fails the test, so the list only shrinks.
 */
const UPWARD_EDGES: Record<string, string> = {
  // Organization rows carry billing columns (billing mode, delinquency) and the plan and usage
  // read model lives in lib/organizations (active-plan, allowances, plans) while lib/billing decides
  // plans and charges from it. Untangling means moving the plan read model into lib/billing.
  'organizations -> billing':
    'entity/active-plan show billing state; insert-organization starts the plan and processor customer',
  // The profile (lib/users) shows the user's organizations, so lib/users reads organizations'
  // entity mapper, while organizations write accounts through lib/users and forget the profile
  // cache after membership changes.
  'users -> organizations': 'the profile lists organization details (lib/users/profile.ts)',
  // Ending a membership removes the member's case access and hands over the cases they alone
  // owned (lib/cases owns case_access), while cases sit above organizations: creating a case
  // checks the organization's plan allowances (lib/organizations/allowances.ts).
  'organizations -> cases': 'end-membership and remove-organization-user change case access through lib/cases',
};

/** Every .ts file under lib/, relative to the repository root. */
const libFiles = () =>
  readdirSync(join(ROOT, 'lib'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => posix.join('lib', name.split('\\').join('/')));

const domainOf = (file: string): string | null => {
  const parts = file.split('/');
  return parts[0] === 'lib' && parts.length > 2 && !NOT_DOMAINS.has(parts[1]!) ? parts[1]! : null;
};

/** The file a relative specifier names: `x.ts`, or `x/index.ts` for a folder. */
const resolveFile = (target: string) =>
  existsSync(join(ROOT, `${target}.ts`)) ? `${target}.ts` : `${target}/index.ts`;

/** Whether an import clause brings in only types. */
function typeOnly(clause: string): boolean {
  if (/^type\s/.test(clause)) return true;
  const named = clause.match(/^\{([^}]*)\}$/s);
  if (!named) return false;
  const names = named[1]!
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  return names.length > 0 && names.every((name) => name.startsWith('type '));
}

/** The relative module specifiers a source imports at runtime. */
export function runtimeImports(source: string): string[] {
  const specifiers: string[] = [];
  for (const [, clause, specifier] of source.matchAll(/^\s*(?:import|export)\s+([^'";]*?)\s*from\s+'(\.[^']+)'/gms))
    if (!typeOnly(clause!.trim())) specifiers.push(specifier!);
  for (const [, specifier] of source.matchAll(/^\s*import\s+'(\.[^']+)'/gm)) specifiers.push(specifier!);
  for (const [, specifier] of source.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g)) specifiers.push(specifier!);
  return specifiers;
}

/** The domain graph: `from -> to` for each pair of domains with a runtime import, and the files that make it. */
function domainEdges(): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const file of libFiles()) {
    const from = domainOf(file);
    if (!from) continue;
    for (const specifier of runtimeImports(readFileSync(join(ROOT, file), 'utf8'))) {
      const target = relative(ROOT, join(ROOT, dirname(file), specifier))
        .split('\\')
        .join('/');
      const to = domainOf(resolveFile(target));
      if (!to || to === from) continue;
      const key = `${from} -> ${to}`;
      edges.set(key, [...(edges.get(key) ?? []), file]);
    }
  }
  return edges;
}

/** One cycle of the graph, as the path of domains that closes it, or null when there is none. */
export function findCycle(edges: Iterable<string>): string[] | null {
  const next = new Map<string, string[]>();
  for (const edge of edges) {
    const [from, to] = edge.split(' -> ') as [string, string];
    next.set(from, [...(next.get(from) ?? []), to]);
  }
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | null => {
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node];
    if (state.get(node) === 'done') return null;
    state.set(node, 'open');
    path.push(node);
    for (const to of next.get(node) ?? []) {
      const cycle = visit(to);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(node, 'done');
    return null;
  };
  for (const node of [...next.keys()].sort()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

describe('domain import cycles', () => {
  const edges = domainEdges();

  it('reads runtime imports and leaves type-only ones out', () => {
    const sample = [
      "import { recordAudit } from '../audit';",
      "import type { Actor } from '../auth/actor';",
      "import { type OrganizationRole, roleRank } from '../organizations/roles';",
      "import { type CaseContext } from '../cases/context';",
      "export { listTokens } from './automation-tokens';",
      "const aws = await import('../aws/secrets');",
    ].join('\n');
    expect(runtimeImports(sample)).toEqual([
      '../audit',
      '../organizations/roles',
      './automation-tokens',
      '../aws/secrets',
    ]);
  });

  it('finds a cycle when there is one', () => {
    expect(findCycle(['a -> b', 'b -> c', 'c -> a'])).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle(['a -> b', 'b -> c', 'a -> c'])).toBeNull();
  });

  it('has no cycle between domains but through the listed upward edges', () => {
    const cycle = findCycle([...edges.keys()].filter((edge) => !(edge in UPWARD_EDGES)));
    const explain = cycle?.slice(1).map((to, i) => `${cycle[i]} -> ${to} (${edges.get(`${cycle[i]} -> ${to}`)![0]})`);
    expect(explain ?? []).toEqual([]);
  });

  it('lists only upward edges that still exist and still close a cycle', () => {
    const others = [...edges.keys()].filter((edge) => !(edge in UPWARD_EDGES));
    const needless = Object.keys(UPWARD_EDGES).filter(
      (edge) => !edges.has(edge) || findCycle([...others, edge]) === null,
    );
    expect(needless).toEqual([]);
  });
});
