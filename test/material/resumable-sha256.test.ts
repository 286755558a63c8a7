import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResumableSha256 } from '../../lib/material/resumable-sha256';

const nodeSha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * The evidence copy's whole-file hash is taken across runs (lib/material/imports/evidence-copy.ts):
 * it must be SHA-256 exactly, however the bytes are cut and wherever the state is saved and loaded.
 */
describe('ResumableSha256', () => {
  it.each([
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    [
      'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    ],
  ])('hashes the FIPS 180-4 example %j', async (text, expected) => {
    expect((await ResumableSha256.create()).update(Buffer.from(text)).digest()).toBe(expected);
  });

  it('matches node:crypto for any bytes cut anywhere, saved and loaded between the pieces', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 700 }),
        fc.array(fc.nat({ max: 700 }), { maxLength: 6 }),
        async (bytes, cuts) => {
          const points = [...new Set([0, ...cuts.map((cut) => Math.min(cut, bytes.length)), bytes.length])].sort(
            (a, b) => a - b,
          );
          let saved = (await ResumableSha256.create()).save();
          for (let i = 1; i < points.length; i++) {
            const hash = (await ResumableSha256.load(saved)).update(bytes.subarray(points[i - 1], points[i]));
            expect(hash.bytesHashed).toBe(points[i]);
            saved = hash.save();
          }
          expect((await ResumableSha256.load(saved)).digest()).toBe(nodeSha256(bytes));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('matches node:crypto on a few MiB in 64 KiB reads', async () => {
    const bytes = new Uint8Array(3 * 1024 * 1024 + 13).map((_, i) => (i * 7919) % 251);
    const hash = await ResumableSha256.create();
    for (let at = 0; at < bytes.length; at += 65_536) hash.update(bytes.subarray(at, at + 65_536));
    expect(hash.digest()).toBe(nodeSha256(bytes));
  });

  it.each(['', 'not base64 of a state', Buffer.alloc(39).toString('base64'), Buffer.alloc(41).toString('base64')])(
    'refuses a saved state that is not one: %j',
    async (saved) => {
      await expect(ResumableSha256.load(saved)).rejects.toThrow('Not a saved SHA-256 state');
    },
  );
});
