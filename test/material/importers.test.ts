import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { runAdminCommand } from '../../lib/admin/cli';
import { createUser } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';

const directory = mkdtempSync(join(tmpdir(), 'cebs-import-'));
const write = (name: string, text: string) => {
  const path = join(directory, name);
  writeFileSync(path, text);
  return path;
};

async function caseOf(owner: Awaited<ReturnType<typeof createUser>>) {
  return expectData(
    await invoke(routes.createCase, {
      token: owner.accessToken,
      organization: owner.organizationId,
      body: { name: 'Lee v. Roe' },
    }),
    201,
  );
}

describe('evidence importers (admin CLI)', () => {
  it('threads an mbox by Message-ID, In-Reply-To and References, and adds nothing on re-import', async () => {
    const owner = await createUser();
    const legal = await caseOf(owner);
    const root = `Message-ID: <root@lee-law.example>\nDate: Mon, 02 Nov 2026 10:00:00 +0000\nFrom: Ann Lee <ann@lee-law.example>\nTo: Bob Roe <bob@roe.example>\nSubject: Settlement\n\nFirst offer.\n`;
    const reply = `Message-ID: <reply@roe.example>\nIn-Reply-To: <root@lee-law.example>\nReferences: <root@lee-law.example>\nDate: Tue, 03 Nov 2026 10:00:00 +0000\nFrom: Bob Roe <bob@roe.example>\nTo: Ann Lee <ann@lee-law.example>\nCc: carl@other.example\nSubject: Re: Settlement\n\nCounter offer.\n`;
    const other = `Message-ID: <other@lee-law.example>\nDate: Wed, 04 Nov 2026 10:00:00 +0000\nFrom: Ann Lee <ann@lee-law.example>\nTo: dana@court.example\nSubject: Filing\n\nUnrelated.\n`;
    const mbox = write(
      'box.mbox',
      [root, reply, other].map((m) => `From sender@example Mon Nov  2 10:00:00 2026\n${m}`).join('\n'),
    );
    const lines: string[] = [];
    expect(await runAdminCommand(['import', 'email', '--case', legal.id, mbox], (l) => lines.push(l))).toBe(0);
    expect(lines.at(-1)).toContain('3 read, 3 imported');
    expect(await runAdminCommand(['import', 'email', '--case', legal.id, mbox], (l) => lines.push(l))).toBe(0);
    expect(lines.at(-1)).toContain('3 read, 0 imported, 3 already there');

    const threads = expectData(
      await invoke(routes.listEmailThreads, { token: owner.accessToken, path: { caseId: legal.id } }),
    );
    expect(threads.total).toBe(2);
    const settlement = threads.data.find((t: any) => t.subject === 'Settlement');
    expect(settlement).toMatchObject({ messageCount: 2 });

    const page = expectData(
      await invoke(routes.listThreadEmails, {
        token: owner.accessToken,
        path: { caseId: legal.id, threadId: settlement.id },
      }),
    );
    expect(page.data.map((e: any) => e.subject)).toEqual(['Settlement', 'Re: Settlement']);
    expect(page.data[1]).toMatchObject({
      cc: [{ email: 'carl@other.example' }],
      tags: [],
      attachments: [],
      emailDataProvider: null,
    });

    const filtered = expectData(
      await invoke(routes.listThreadEmails, {
        token: owner.accessToken,
        path: { caseId: legal.id, threadId: settlement.id },
        query: { domains: 'OTHER.example' },
      }),
    );
    expect(filtered.data.map((e: any) => e.subject)).toEqual(['Re: Settlement']);
  });

  it('imports messages.csv and support tickets, searchable through the routes', async () => {
    const owner = await createUser();
    const legal = await caseOf(owner);
    const csv = write(
      'messages.csv',
      'CONVERSATION ID,CONVERSATION TITLE,FROM,SENDER PROFILE URL,TO,RECIPIENT PROFILE URLS,DATE,SUBJECT,CONTENT,FOLDER\n' +
        'c1,Hiring,Ann Lee,https://x/ann,Bob Roe,https://x/bob,2026-10-01 09:00:00 UTC,Offer,"We can offer a contract, signed today",INBOX\n' +
        'c1,Hiring,Bob Roe,https://x/bob,Ann Lee,https://x/ann,2026-10-02 09:00:00 UTC,,"Contracts look fine",INBOX\n',
    );
    expect(
      await runAdminCommand(
        ['import', 'professional-network', '--case', legal.id, '--profile', 'Ann Lee', csv],
        () => {},
      ),
    ).toBe(0);
    const search = expectData(
      await invoke(routes.searchNetworkMessages, {
        token: owner.accessToken,
        path: { caseId: legal.id },
        query: { searchText: 'contract' },
      }),
    );
    expect(search.total).toBe(2);
    expect(search.data[0]).toMatchObject({
      content: 'Contracts look fine',
      conversationTitle: 'Hiring',
      participants: expect.arrayContaining(['Ann Lee', 'Bob Roe']),
    });

    const tickets = write(
      'tickets.json',
      JSON.stringify({
        '17': {
          id: 17,
          subject: 'Account locked',
          status: 'closed',
          created_at: '2026-09-01T00:00:00Z',
          comments: [{ author: 'agent', comment: 'Password reset sent', created_at: '2026-09-01T01:00:00Z' }],
        },
      }),
    );
    expect(
      await runAdminCommand(
        ['import', 'chat-platform', '--case', legal.id, '--profile', 'ann#0001', tickets],
        () => {},
      ),
    ).toBe(0);
    const profiles = expectData(
      await invoke(routes.listChatProfiles, { token: owner.accessToken, path: { caseId: legal.id } }),
    );
    const found = expectData(
      await invoke(routes.listSupportTickets, {
        token: owner.accessToken,
        path: { caseId: legal.id, chatPlatformId: profiles.data[0].id },
        query: { searchText: 'password' },
      }),
    );
    expect(found.data).toEqual([
      expect.objectContaining({
        ticketId: 17,
        subject: 'Account locked',
        comments: [expect.objectContaining({ comment: 'Password reset sent' })],
      }),
    ]);
  });

  it('refuses a case that does not exist, whether or not its id is a UUID, storing nothing', async () => {
    const mbox = write('unknown-case.mbox', `From sender@example Mon Nov  2 10:00:00 2026\nSubject: x\n\nx\n`);
    for (const caseId of ['00000000-0000-4000-8000-000000000000', 'not-a-case-id'])
      await expect(runAdminCommand(['import', 'email', '--case', caseId, mbox], () => {})).rejects.toMatchObject({
        code: 'NOT_FOUND',
        message: `No case ${caseId}`,
      });
  });
});
