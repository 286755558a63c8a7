import { createSHA256, type IHasher } from 'hash-wasm';

/**
 * SHA-256 whose state can be saved between invocations and taken up again: the evidence copy of a
 * multi-TB import hashes one segment per step, across many worker runs, and node:crypto cannot
 * export a hash's state. hash-wasm can (its `save()`/`load()`), at node:crypto's speed order; this
 * wraps it with the count of bytes hashed, saved with the state as base64:
 * 8 bytes of count, then hash-wasm's state. Tested against node:crypto.
 */
export class ResumableSha256 {
  private constructor(
    private readonly hasher: IHasher,
    private length: number,
  ) {}

  /** A new hash of no bytes. */
  static async create(): Promise<ResumableSha256> {
    const hasher = await createSHA256();
    hasher.init();
    return new ResumableSha256(hasher, 0);
  }

  /** A hash taken up where `saved` (from save()) left it. */
  static async load(saved: string): Promise<ResumableSha256> {
    const bytes = Buffer.from(saved, 'base64');
    const notState = new Error('Not a saved SHA-256 state');
    if (bytes.byteLength <= 8) throw notState;
    const length = Number(bytes.readBigUInt64BE(0));
    if (!Number.isSafeInteger(length)) throw notState;
    const hasher = await createSHA256();
    try {
      hasher.load(bytes.subarray(8));
    } catch {
      throw notState;
    }
    return new ResumableSha256(hasher, length);
  }

  /** Bytes hashed so far. */
  get bytesHashed(): number {
    return this.length;
  }

  update(data: Uint8Array): this {
    this.hasher.update(data);
    this.length += data.byteLength;
    return this;
  }

  /** The state, to take up with load() in a later run. */
  save(): string {
    const count = Buffer.alloc(8);
    count.writeBigUInt64BE(BigInt(this.length));
    return Buffer.concat([count, this.hasher.save()]).toString('base64');
  }

  /** The hex SHA-256 of every byte hashed (the hash cannot be updated after). */
  digest(): string {
    return this.hasher.digest('hex');
  }
}
