import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { DirectoryStorage, useObjectStorage } from '../../lib/storage';

/**
 * Objects of the calling file (or describe block) go to a temporary directory of their own, never
 * to the repository's .data: installed before its tests, removed with its contents after them.
 * `root` is where a test reads a stored object's bytes (`join(root, key)`).
 */
export function useTemporaryObjectStorage(label: string): { storage: DirectoryStorage; root: string } {
  const root = mkdtempSync(join(tmpdir(), `cebs-${label}-`));
  const storage = new DirectoryStorage(root, `${label}-secret`);
  beforeAll(() => useObjectStorage(storage));
  afterAll(() => {
    useObjectStorage(undefined);
    rmSync(root, { recursive: true, force: true });
  });
  return { storage, root };
}
