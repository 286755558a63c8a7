/**
 * SHA-256 (FIPS 180-4) whose state can be saved between invocations and taken up again: the
 * evidence copy of a multi-TB import hashes one segment per step, across many worker runs, and
 * node:crypto cannot export a hash's state. The state is the eight working words, the bytes hashed
 * so far and the tail not yet a whole 64-byte block (`save()`, base64). Tested against node:crypto.
 */

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

const INITIAL = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** The saved form: 8 words, the byte count (as a 64-bit number), then the tail (0 to 63 bytes). */
const HEADER_BYTES = 8 * 4 + 8;

export class ResumableSha256 {
  private readonly h = new Int32Array(INITIAL);
  private readonly w = new Int32Array(64);
  private readonly tail = new Uint8Array(64);
  private tailLength = 0;
  private length = 0;

  /** A hash taken up where `saved` (from save()) left it. */
  static load(saved: string): ResumableSha256 {
    const bytes = Buffer.from(saved, 'base64');
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const tailLength = bytes.byteLength - HEADER_BYTES;
    const notState = new Error('Not a saved SHA-256 state');
    if (tailLength < 0 || tailLength > 63) throw notState;
    const length = Number(view.getBigUint64(32));
    if (!Number.isSafeInteger(length) || length % 64 !== tailLength) throw notState;
    const hash = new ResumableSha256();
    for (let i = 0; i < 8; i++) hash.h[i] = view.getInt32(i * 4);
    hash.length = length;
    hash.tail.set(bytes.subarray(HEADER_BYTES));
    hash.tailLength = tailLength;
    return hash;
  }

  /** Bytes hashed so far. */
  get bytesHashed(): number {
    return this.length;
  }

  update(data: Uint8Array): this {
    let offset = 0;
    this.length += data.byteLength;
    if (this.tailLength > 0) {
      const taken = Math.min(64 - this.tailLength, data.byteLength);
      this.tail.set(data.subarray(0, taken), this.tailLength);
      this.tailLength += taken;
      offset = taken;
      if (this.tailLength < 64) return this;
      this.blocks(this.tail, 0, 64);
      this.tailLength = 0;
    }
    const whole = offset + Math.floor((data.byteLength - offset) / 64) * 64;
    this.blocks(data, offset, whole);
    this.tail.set(data.subarray(whole), 0);
    this.tailLength = data.byteLength - whole;
    return this;
  }

  save(): string {
    const bytes = Buffer.alloc(HEADER_BYTES + this.tailLength);
    for (let i = 0; i < 8; i++) bytes.writeInt32BE(this.h[i]!, i * 4);
    bytes.writeBigUInt64BE(BigInt(this.length), 32);
    bytes.set(this.tail.subarray(0, this.tailLength), HEADER_BYTES);
    return bytes.toString('base64');
  }

  /** The hex digest; the hash is not used after it. */
  digest(): string {
    const bitLength = BigInt(this.length) * 8n;
    const padding = new Uint8Array((this.tailLength < 56 ? 56 : 120) - this.tailLength + 8);
    padding[0] = 0x80;
    new DataView(padding.buffer).setBigUint64(padding.byteLength - 8, bitLength);
    const length = this.length;
    this.update(padding);
    this.length = length;
    return Buffer.from(
      new Uint8Array(Array.from(this.h, (word) => [word >>> 24, word >>> 16, word >>> 8, word]).flat()),
    ).toString('hex');
  }

  /** Hashes the 64-byte blocks of data[from, to). */
  private blocks(data: Uint8Array, from: number, to: number): void {
    const w = this.w;
    const h = this.h;
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    let h0 = h[0]!;
    let h1 = h[1]!;
    let h2 = h[2]!;
    let h3 = h[3]!;
    let h4 = h[4]!;
    let h5 = h[5]!;
    let h6 = h[6]!;
    let h7 = h[7]!;
    for (let p = from; p < to; p += 64) {
      for (let i = 0; i < 16; i++) w[i] = view.getInt32(p + i * 4);
      for (let i = 16; i < 64; i++) {
        const a = w[i - 15]!;
        const b = w[i - 2]!;
        const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
        const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
        w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
      }
      let a = h0;
      let b = h1;
      let c = h2;
      let d = h3;
      let e = h4;
      let f = h5;
      let g = h6;
      let hh = h7;
      for (let i = 0; i < 64; i++) {
        const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
        const t1 = (hh + S1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
        const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
        const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
        hh = g;
        g = f;
        f = e;
        e = (d + t1) | 0;
        d = c;
        c = b;
        b = a;
        a = (t1 + t2) | 0;
      }
      h0 = (h0 + a) | 0;
      h1 = (h1 + b) | 0;
      h2 = (h2 + c) | 0;
      h3 = (h3 + d) | 0;
      h4 = (h4 + e) | 0;
      h5 = (h5 + f) | 0;
      h6 = (h6 + g) | 0;
      h7 = (h7 + hh) | 0;
    }
    h[0] = h0;
    h[1] = h1;
    h[2] = h2;
    h[3] = h3;
    h[4] = h4;
    h[5] = h5;
    h[6] = h6;
    h[7] = h7;
  }
}
