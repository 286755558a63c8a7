import { basename, join, relative } from 'node:path';
import { build } from 'esbuild';
import { lambdaBundling, REPOSITORY_ROOT } from '../../infra/bundling';

/**
 * Bundles a bench worker (`entry`, a .ts file) into `outdir` as the stack bundles a Lambda function
 * (infra/bundling: ESM, minified, the same externals, banner and aliases; as one file, where the
 * stack may split dynamic imports into chunks), so the worker process, run with plain node, loads
 * what the cloud function loads. Run through tsx instead, the same process starts at about 250 MB
 * (module loading leaves that much behind on this machine) against about 65-90 MB bundled.
 * Answers the bundle's path.
 */
export async function bundleWorker(entry: string, outdir: string): Promise<string> {
  const options = lambdaBundling(relative(REPOSITORY_ROOT, entry));
  const aliases = options.esbuildArgs?.['--alias'];
  const outfile = join(outdir, basename(entry).replace(/\.ts$/, '.mjs'));
  await build({
    entryPoints: [entry],
    absWorkingDir: REPOSITORY_ROOT,
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: options.target,
    minify: options.minify,
    mainFields: options.mainFields,
    external: options.externalModules,
    banner: { js: options.banner ?? '' },
    alias: Object.fromEntries(
      (Array.isArray(aliases) ? aliases : []).map((alias) => String(alias).split('=') as [string, string]),
    ),
    logLevel: 'warning',
  });
  return outfile;
}
