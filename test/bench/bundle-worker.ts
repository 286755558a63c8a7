import { basename, join } from 'node:path';
import { build } from 'esbuild';
import { LAMBDA_ESBUILD, REPOSITORY_ROOT } from '../../infra/bundling';

/**
 * Bundles a bench worker (`entry`, a .ts file) into `outdir` as the stack bundles a Lambda function
 * (infra/bundling: ESM, minified, the same externals, banner and aliases; as one file, where the
 * stack may split dynamic imports into chunks), so the worker process, run with plain node, loads
 * what the cloud function loads. Run through tsx instead, the same process starts at about 250 MB
 * (module loading leaves that much behind on this machine) against about 65-90 MB bundled.
 * Answers the bundle's path.
 */
export async function bundleWorker(entry: string, outdir: string): Promise<string> {
  const outfile = join(outdir, basename(entry).replace(/\.ts$/, '.mjs'));
  await build({
    entryPoints: [entry],
    absWorkingDir: REPOSITORY_ROOT,
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: LAMBDA_ESBUILD.target,
    minify: true,
    mainFields: [...LAMBDA_ESBUILD.mainFields],
    external: [...LAMBDA_ESBUILD.external],
    banner: { js: LAMBDA_ESBUILD.banner },
    alias: Object.fromEntries(LAMBDA_ESBUILD.aliases.map((alias) => alias.split('=') as [string, string])),
    logLevel: 'warning',
  });
  return outfile;
}
