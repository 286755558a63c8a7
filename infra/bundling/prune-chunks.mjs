// `node prune-chunks.mjs <bundle directory>`, run after the split bundling (infra/bundling/index.ts):
// removes the chunks index.mjs can never load. esbuild makes every `import()` target an entry point
// of its own, kept even when the code that imports it was tree-shaken away (Stripe in a route that
// never charges); a chunk is loaded only through a path literal in index.mjs or in a chunk it loads.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const directory = process.argv[2];
const reachable = new Set();
const visit = (file) => {
  if (reachable.has(file)) return;
  reachable.add(file);
  const text = readFileSync(join(directory, file), 'utf8');
  for (const match of text.matchAll(/"(\.\.?\/[^"]+\.mjs)"/g)) visit(normalize(join(dirname(file), match[1])));
};
visit('index.mjs');
const chunks = join(directory, 'chunks');
for (const file of existsSync(chunks) ? readdirSync(chunks) : []) {
  const chunk = relative(directory, join(directory, 'chunks', file.replace(/\.map$/, '')));
  if (!reachable.has(chunk)) rmSync(join(chunks, file));
}
