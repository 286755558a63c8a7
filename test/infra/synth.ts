import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll } from 'vitest';
import { buildApp, cdkJsonContext } from '../../infra/build-app';
import type { EnvironmentName } from '../../infra/environments';
import type { CaseEvidenceStack } from '../../infra/stack';

export interface SynthesizedResource {
  Properties: Record<string, any>;
  [key: string]: any;
}

export interface Synthesized {
  app: App;
  stacks: Record<EnvironmentName, CaseEvidenceStack>;
  /** The parent template and every nested template of the environment's stack. */
  templates(environment: EnvironmentName): Template[];
  /** [logical id, resource] of every resource of this type, parent and nested stacks together. */
  resourcesOf(environment: EnvironmentName, type: string): Array<[string, SynthesizedResource]>;
  /** Deletes the synth output directory. */
  dispose(): void;
}

/**
 * A quick synth for the infra tests that check one concern: the chosen environments, only the
 * given routes (`-c routes=`, default two), real bundles and cdk-nag as `npm run synth` runs them.
 * test/infra/stack.test.ts is the one full synth (every route).
 */
export function synthesize(
  environments: EnvironmentName[],
  routes: string[] = ['login', 'getProfile'],
  options: { subdirectory?: string } = {},
): Synthesized {
  const root = mkdtempSync(join(tmpdir(), 'cebs-synth-'));
  // A synth into a folder deeper than usual (test/infra/reproducible-bundles.test.ts).
  const outdir = options.subdirectory ? join(root, options.subdirectory) : root;
  const { app, stacks } = buildApp({
    environmentNames: environments,
    outdir,
    context: { ...cdkJsonContext(), routes: routes.join(',') },
  });
  app.synth();
  const byName = Object.fromEntries(stacks.map((stack) => [stack.settings.name, stack])) as Record<
    EnvironmentName,
    CaseEvidenceStack
  >;
  const cache = new Map<EnvironmentName, Template[]>();
  const templates = (environment: EnvironmentName) => {
    const stack = byName[environment];
    if (!stack) throw new Error(`${environment} was not synthesized`);
    let list = cache.get(environment);
    if (!list) {
      list = [stack, ...stack.routeStacks].map((s) => Template.fromStack(s));
      cache.set(environment, list);
    }
    return list;
  };
  return {
    app,
    stacks: byName,
    templates,
    resourcesOf: (environment, type) =>
      templates(environment).flatMap(
        (template) => Object.entries(template.findResources(type)) as Array<[string, SynthesizedResource]>,
      ),
    dispose: () => rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * How long a whole synth may take: every route of the table, in each environment asked for, is an
 * esbuild bundle (about 150 for dev and prod at 72 routes: 224 s on a quiet 2-core machine, more
 * beside other test files). Generous, as a timeout here fails every test of the file at once.
 */
export const SYNTH_TIMEOUT_MS = 900_000;

/**
 * One synth shared by the tests of a file: made before them, deleted after them. The object
 * answers for the synth once the file's tests run.
 */
export function synthesizeForThisFile(environments: EnvironmentName[], routes?: string[]): Synthesized {
  let current: Synthesized | undefined;
  beforeAll(() => {
    current = synthesize(environments, routes);
  }, SYNTH_TIMEOUT_MS);
  afterAll(() => current?.dispose());
  const synthesized = () => {
    if (!current) throw new Error('The synth runs before the tests (beforeAll)');
    return current;
  };
  return {
    get app() {
      return synthesized().app;
    },
    get stacks() {
      return synthesized().stacks;
    },
    templates: (environment) => synthesized().templates(environment),
    resourcesOf: (environment, type) => synthesized().resourcesOf(environment, type),
    dispose: () => synthesized().dispose(),
  };
}

/** The synthesized function and role resources of a deployed function, and the (nested) stack holding them. */
export function resourcesOfFunction(deployed: CaseEvidenceStack['functions'][number]) {
  const stack = Stack.of(deployed.construct);
  const resources = Template.fromStack(stack).toJSON().Resources;
  return {
    deployed,
    stack,
    fn: resources[stack.getLogicalId(deployed.construct.function.node.defaultChild as CfnElement)],
    role: resources[stack.getLogicalId(deployed.construct.role.node.defaultChild as CfnElement)],
  };
}
