import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaBundling, REPOSITORY_ROOT } from '../../infra/bundling';
import { type Synthesized, synthesize } from './synth';

/**
 * Issue 32: a bundle must not depend on where it was built. Two synths of the same routes into two
 * output folders must stage byte-identical bundles (the asset hash is the hash of the bundle
 * directory), and no bundle or source map may name a folder of the build machine. `selectPlan`
 * reaches the payment processor, whose sandbox is left out of every bundle.
 */
const ROUTES = ['login', 'selectPlan'];

let first: Synthesized;
let second: Synthesized;
beforeAll(() => {
  first = synthesize(['dev'], ROUTES);
  second = synthesize(['dev'], ROUTES, { subdirectory: 'deeper/cdk.out' });
}, 600_000);
afterAll(() => {
  first?.dispose();
  second?.dispose();
});

/** Function name -> asset hash of its code, as the template deploys it. */
function assetHashes(synthesized: Synthesized): Record<string, string> {
  return Object.fromEntries(
    synthesized.stacks.dev.functions.map((deployed) => {
      const directory = deployed.construct.bundleDirectory;
      if (!directory) throw new Error(`${deployed.name}: no bundle`);
      return [deployed.name, directory.split('/').at(-1)!];
    }),
  );
}

function filesOf(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((file) => statSync(join(directory, file)).isFile())
    .sort();
}

describe('reproducible bundles', () => {
  it('stages the same asset hashes from two synths into different folders', () => {
    const hashes = assetHashes(first);
    expect(Object.keys(hashes)).toEqual(expect.arrayContaining(ROUTES));
    expect(assetHashes(second)).toEqual(hashes);
  });

  it('names no folder of the build machine in any bundle or source map', () => {
    const forbidden = [REPOSITORY_ROOT, tmpdir(), '/work/', '/tmp/', '/home/'];
    let checked = 0;
    for (const deployed of first.stacks.dev.functions) {
      const directory = deployed.construct.bundleDirectory!;
      for (const file of filesOf(directory)) {
        const text = readFileSync(join(directory, file), 'utf8');
        checked += 1;
        for (const path of forbidden) expect(text.includes(path), `${deployed.name}/${file} names ${path}`).toBe(false);
        if (file.endsWith('.map'))
          for (const source of JSON.parse(text).sources as string[])
            expect(source, `${deployed.name}/${file}`).toMatch(
              /^((lib|functions|infra|schemas|node_modules)\/|https:\/\/)/,
            );
      }
    }
    expect(checked).toBeGreaterThan(ROUTES.length);
  });

  it('builds the same bundle from a copy of the repository in another folder', () => {
    const selectPlan = first.stacks.dev.functions.find((deployed) => deployed.name === 'selectPlan')!;
    const staged = selectPlan.construct.bundleDirectory!;
    const root = mkdtempSync(join(tmpdir(), 'cebs-checkout-'));
    try {
      // The files git would check out (and those not yet committed), node_modules shared by a symlink.
      const checkout = join(root, 'somewhere', 'else');
      const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
        cwd: REPOSITORY_ROOT,
        encoding: 'utf8',
      })
        .split('\0')
        .filter((file) => file && file !== 'node_modules');
      for (const file of files) {
        mkdirSync(dirname(join(checkout, file)), { recursive: true });
        cpSync(join(REPOSITORY_ROOT, file), join(checkout, file));
      }
      symlinkSync(join(REPOSITORY_ROOT, 'node_modules'), join(checkout, 'node_modules'));
      const output = join(root, 'out');
      mkdirSync(output);
      const commands = lambdaBundling('functions/billing/select-plan.ts').commandHooks!.afterBundling(checkout, output);
      execFileSync('bash', ['-c', commands.join(' && ')], { stdio: 'pipe' });
      expect(filesOf(output)).toEqual(filesOf(staged));
      for (const file of filesOf(staged))
        expect(readFileSync(join(output, file)).equals(readFileSync(join(staged, file))), file).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
