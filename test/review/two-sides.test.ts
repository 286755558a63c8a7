import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { emailTags, networkConversations, networkConversationTags, networkMessages } from '../../lib/db/schema';
import type { TestUser } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { createProfile, seedThread } from '../harness/material';
import { createTagRow, tagPeople } from '../harness/tags';

/**
 * Work product stays on its side: one table of who (the firm's case owner, a firm colleague, a
 * viewer, opposing counsel) × which tag (system, organization, the firm's case tag, opposing
 * counsel's case tag, the owner's and the colleague's user tags) × where a tag can show (the tag
 * list, email records, the thread email and network filters, the case search's results, filter
 * and facets, tagging). Every tag is on the same email and the same network conversation: only
 * the tag's visibility decides what each caller sees.
 */

type Who = 'owner' | 'colleague' | 'viewer' | 'opposing';
type TagKind = 'system' | 'organization' | 'firmCase' | 'opposingCase' | 'ownerUser' | 'colleagueUser';

const TAG_KINDS: TagKind[] = ['system', 'organization', 'firmCase', 'opposingCase', 'ownerUser', 'colleagueUser'];

/** Who sees which tag: system tags both sides; the rest only their own side, user tags only their creator. */
const SEES: Record<Who, Record<TagKind, boolean>> = {
  owner: {
    system: true,
    organization: true,
    firmCase: true,
    opposingCase: false,
    ownerUser: true,
    colleagueUser: false,
  },
  colleague: {
    system: true,
    organization: true,
    firmCase: true,
    opposingCase: false,
    ownerUser: false,
    colleagueUser: true,
  },
  viewer: {
    system: true,
    organization: true,
    firmCase: true,
    opposingCase: false,
    ownerUser: false,
    colleagueUser: false,
  },
  opposing: {
    system: true,
    organization: false,
    firmCase: false,
    opposingCase: true,
    ownerUser: false,
    colleagueUser: false,
  },
};

let world: Awaited<ReturnType<typeof scenario>>;

async function scenario() {
  const people = await tagPeople();
  const { organizationId, caseId, owner, colleague, opposing } = people;
  const tagIds: Record<TagKind, string> = {
    system: (await createTagRow({ organizationId, type: 'system', name: 'System' })).id,
    organization: (await createTagRow({ organizationId, type: 'organization', name: 'Firm wide', side: 'org' })).id,
    firmCase: (await createTagRow({ organizationId, caseId, type: 'case', name: 'Firm case', side: 'org' })).id,
    opposingCase: (
      await createTagRow({ organizationId, caseId, type: 'case', name: 'Their case', side: 'opposing_council' })
    ).id,
    ownerUser: (
      await createTagRow({
        organizationId,
        caseId,
        type: 'user',
        name: 'Owner own',
        side: 'org',
        createdById: owner.id,
      })
    ).id,
    colleagueUser: (
      await createTagRow({
        organizationId,
        caseId,
        type: 'user',
        name: 'Colleague own',
        side: 'org',
        createdById: colleague.id,
      })
    ).id,
  };
  // One thread: the first email carries every tag, the second only the firm's case tag.
  const { threadId, emailIds } = await seedThread(caseId, [{ minute: 1 }, { minute: 2 }]);
  const [everyTag, firmOnly] = emailIds as [string, string];
  await db()
    .insert(emailTags)
    .values([
      ...TAG_KINDS.map((kind) => ({ emailId: everyTag, tagId: tagIds[kind], addedBy: 'user' as const })),
      { emailId: firmOnly, tagId: tagIds.firmCase, addedBy: 'user' as const },
    ]);
  // A visible profile's conversation carrying every tag, with one message.
  const profile = await createProfile(caseId, 'professional_network', 'Ann Lee', true);
  const [conversation] = await db()
    .insert(networkConversations)
    .values({ caseId, profileId: profile.id, externalId: 'c1', title: 'Chat', participants: ['Ann Lee'] })
    .returning();
  await db()
    .insert(networkConversationTags)
    .values(
      TAG_KINDS.map((kind) => ({ conversationId: conversation!.id, tagId: tagIds[kind], addedBy: 'user' as const })),
    );
  await db()
    .insert(networkMessages)
    .values({
      caseId,
      conversationId: conversation!.id,
      profileId: profile.id,
      externalId: 'm1',
      from: 'Ann Lee',
      to: 'Bob Roe',
      date: new Date(Date.UTC(2026, 9, 1)),
      content: 'Body of the chat message',
    });
  const users: Record<Who, TestUser> = {
    owner,
    colleague,
    viewer: people.viewer,
    opposing,
  };
  return { ...people, users, tagIds, threadId, everyTag, firmOnly };
}

beforeAll(async () => {
  world = await scenario();
});

const WHO: Who[] = ['owner', 'colleague', 'viewer', 'opposing'];
const CASES = WHO.flatMap((who) => TAG_KINDS.map((tag) => ({ who, tag, sees: SEES[who][tag] })));

const token = (who: Who) => world.users[who].accessToken;
/** The emails carrying a tag: every tag is on the first, the firm's case tag on the second too. */
const emailsCarrying = (tag: TagKind) => (tag === 'firmCase' ? 2 : 1);
const ids = (list: Array<{ id: string }>) => list.map((t) => t.id);

async function threadEmails(who: Who, query: Record<string, string> = {}) {
  return expectData(
    await invoke(routes.listThreadEmails, {
      token: token(who),
      path: { caseId: world.caseId, threadId: world.threadId },
      query,
    }),
  );
}

async function caseSearch(who: Who, query: Record<string, string>) {
  return expectData(await invoke(routes.searchCase, { token: token(who), path: { caseId: world.caseId }, query }));
}

describe('two sides: who sees which tag, everywhere', () => {
  it.each(CASES)('$who × $tag: the tag list shows it: $sees', async ({ who, tag, sees }) => {
    const page = expectData(
      await invoke(routes.listCaseTags, {
        token: token(who),
        path: { caseId: world.caseId },
        query: { perPage: '100' },
      }),
    );
    expect(ids(page.data ?? []).includes(world.tagIds[tag])).toBe(sees);
  });

  it.each(CASES)('$who × $tag: email records show it in tags and attachedTags: $sees', async ({ who, tag, sees }) => {
    const page = await threadEmails(who);
    const email = page.data.find((e: { id: string }) => e.id === world.everyTag);
    expect(ids(email.tags).includes(world.tagIds[tag])).toBe(sees);
    expect(email.attachedTags.some((a: { tagId: string }) => a.tagId === world.tagIds[tag])).toBe(sees);
  });

  it.each(CASES)('$who × $tag: thread emails `tags` and `excludeTags` use it: $sees', async ({ who, tag, sees }) => {
    const tagged = await threadEmails(who, { tags: world.tagIds[tag] });
    expect(tagged.total).toBe(sees ? emailsCarrying(tag) : 0);
    const excluded = await threadEmails(who, { excludeTags: world.tagIds[tag] });
    expect(excluded.total).toBe(sees ? 2 - emailsCarrying(tag) : 2);
  });

  it.each(CASES)('$who × $tag: network search `tags` uses it: $sees', async ({ who, tag, sees }) => {
    const page = expectData(
      await invoke(routes.searchNetworkMessages, {
        token: token(who),
        path: { caseId: world.caseId },
        query: { searchText: 'body', tags: world.tagIds[tag] },
      }),
    );
    expect(page.total).toBe(sees ? 1 : 0);
  });

  it.each(CASES)('$who × $tag: the case search filters, shows and counts it: $sees', async ({ who, tag, sees }) => {
    const all = await caseSearch(who, { q: 'body' });
    // Both emails and the message match "body" for every caller.
    expect(all.total).toBe(3);
    expect(all.facets.tags.some((f: { tagId: string }) => f.tagId === world.tagIds[tag])).toBe(sees);
    const withTags = all.data.filter((item: { tags: Array<{ id: string }> }) =>
      ids(item.tags).includes(world.tagIds[tag]),
    );
    // The emails carrying it and the message of the conversation carrying it.
    expect(withTags.length).toBe(sees ? emailsCarrying(tag) + 1 : 0);
    const filtered = await caseSearch(who, { q: 'body', tags: world.tagIds[tag] });
    expect(filtered.total).toBe(sees ? emailsCarrying(tag) + 1 : 0);
  });

  it.each(CASES)('$who × $tag: tagging with it: accepted when seen (viewers never)', async ({ who, tag, sees }) => {
    const result = await invoke(routes.tagEvidence, {
      token: token(who),
      path: { caseId: world.caseId },
      body: { add: [world.tagIds[tag]], items: [{ kind: 'email', id: world.everyTag }] },
    });
    if (who === 'viewer') expect(result.status).toBe(403);
    else if (sees) expect(result.status).toBe(202);
    else expect(result.status).toBe(404);
  });

  it.each(WHO)('%s: `untagged` counts only the tags the caller sees', async (who) => {
    // The second email carries only the firm's case tag: untagged for opposing counsel alone.
    const page = await threadEmails(who, { untagged: 'true' });
    expect(ids(page.data ?? [])).toEqual(who === 'opposing' ? [world.firmOnly] : []);
  });
});
