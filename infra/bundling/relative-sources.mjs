// `node relative-sources.mjs <bundle directory> <repository root>`, run after the split bundling
// (infra/bundling/index.ts): esbuild writes each source map's `sources` relative to the map's own
// folder (`../../../work/checkout/lib/db/client.ts`), so a bundle named the folders of the build
// machine and its asset hash changed with the checkout and the synth output folder. Every source
// becomes repository-relative (`lib/db/client.ts`), a package's as `node_modules/<package>/...`
// wherever node_modules really is (a symlinked node_modules resolves outside the checkout).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const [directory, repository] = process.argv.slice(2);
const maps = readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.map'));
for (const file of maps) {
  const path = join(directory, file);
  const map = JSON.parse(readFileSync(path, 'utf8'));
  map.sources = map.sources.map((source) => {
    // A package's own map may name its sources by URL (entities: raw.githubusercontent.com).
    if (/^[a-z][a-z0-9+.-]*:/i.test(source)) return source;
    const relativePath = relative(repository, resolve(dirname(path), source))
      .split(sep)
      .join('/');
    const modules = relativePath.lastIndexOf('node_modules/');
    return modules >= 0 ? relativePath.slice(modules) : relativePath;
  });
  writeFileSync(path, JSON.stringify(map));
}
