import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalMailSink, MAIL_SINK_KEPT_MESSAGES } from '../../lib/mail/transport';
import { ownDataDir } from '../harness/data-dir';

const dataDir = ownDataDir('mail-sink-');

const message = (n: number) => ({
  to: `reader-${n}@example.com`,
  subject: `Message ${n}`,
  text: 'text',
  html: '<p>html</p>',
});

describe('the local mail sink', () => {
  it('keeps the last MAIL_SINK_KEPT_MESSAGES messages in memory and every message in its file', async () => {
    // Prepare
    const sink = new LocalMailSink(dataDir.path);

    // Act: past the bound
    for (let n = 0; n < MAIL_SINK_KEPT_MESSAGES + 10; n += 1) await sink.send(message(n));

    // Assert: memory stays at the bound, the newest kept in order, the file has them all
    expect(sink.messages).toHaveLength(MAIL_SINK_KEPT_MESSAGES);
    expect(sink.messages[0]?.subject).toBe('Message 10');
    expect(sink.messages.at(-1)?.subject).toBe(`Message ${MAIL_SINK_KEPT_MESSAGES + 9}`);
    const lines = readFileSync(join(dataDir.path, 'mail-sink.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(MAIL_SINK_KEPT_MESSAGES + 10);
  });
});
