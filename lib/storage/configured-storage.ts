import { join } from 'node:path';
import { config } from '../config';
import { localSecret } from '../secrets';
import { DirectoryStorage } from './directory-storage';
import type { ObjectStorage } from './object-storage';
import { S3Storage } from './s3-storage';

let storage: ObjectStorage | undefined;

export function objectStorage(): ObjectStorage {
  storage ??= configuredStorage();
  return storage;
}

function configuredStorage(): ObjectStorage {
  const { STORAGE_BUCKET, WORK_BUCKET, DATA_DIR } = config();
  // Locally the links have a key of their own, never JWT_SECRET: one secret, one purpose.
  if (!STORAGE_BUCKET)
    return new DirectoryStorage(join(DATA_DIR, 'objects'), localSecret(DATA_DIR, 'object-link-secret'));
  // In the evidence bucket, staging uploads and generated documents would be kept for good.
  if (!WORK_BUCKET)
    throw new Error(
      'WORK_BUCKET must be set with STORAGE_BUCKET: staging and generated objects cannot go under Object Lock',
    );
  return new S3Storage({ evidence: STORAGE_BUCKET, work: WORK_BUCKET });
}

export function useObjectStorage(next: ObjectStorage | undefined): void {
  storage = next;
}
