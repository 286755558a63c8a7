import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { overrideConfig } from '../../lib/config';
import { useObjectStorage } from '../../lib/storage';

/**
 * Gives the test file a DATA_DIR of its own for its hooks and tests (stored objects go to its
 * `objects/`, so a test can look at the files), removed after the file. Call it at the top level,
 * before hooks that need the directory: `path` is set once the file's first hook has run.
 */
export function ownDataDir(prefix: string): { readonly path: string } {
  const dataDir = { path: '' };
  let restoreConfig: () => void = () => {};
  beforeAll(() => {
    dataDir.path = mkdtempSync(join(tmpdir(), prefix));
    restoreConfig = overrideConfig({ DATA_DIR: dataDir.path });
    // The storage is made from DATA_DIR on first use: drop the one made before.
    useObjectStorage(undefined);
  });
  afterAll(() => {
    restoreConfig();
    useObjectStorage(undefined);
    rmSync(dataDir.path, { recursive: true, force: true });
  });
  return dataDir;
}
