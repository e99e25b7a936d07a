/**
 * Announcements with read fan-out: publishing writes one row however many
 * users there are, and each user's unread state comes from one "read up to"
 * instant of their own.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, startHarness } from '../helpers/harness.ts';

const PUBLISH = `mutation ($title: String!, $text: String!) { publishAnnouncement(input: { title: $title, text: $text }) { announcement { id title unread } } }`;
const LIST = `query ($first: Int, $after: String) {
  viewer { unreadAnnouncementCount announcements(first: $first, after: $after) { edges { cursor node { id title text unread publishedAt } } pageInfo { hasNextPage endCursor } } }
}`;
const MARK = `mutation { markAnnouncementsRead { readUpTo } }`;
const NODE = `query ($id: ID!) { node(id: $id) { id ... on Announcement { title unread } } }`;

describe.each(backends)('Announcements (%s)', (backend) => {
  let harness: Harness;
  let admin: Client;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    harness = await startHarness(backend);
    admin = await harness.client('ops', { roles: ['admin'] });
    alice = await harness.client('alice');
    bob = await harness.client('bob');
  });
  afterAll(() => harness.close());

  const tableCounts = async () =>
    rowsOf<{ announcements: number; reads: number }>(
      await harness.database.db.execute(
        sql`select (select count(*)::int from announcements) as announcements, (select count(*)::int from announcement_reads) as reads`,
      ),
    )[0]!;

  it('lets only admins publish, and publishing writes one row whoever will read it', async () => {
    expect(codes(await alice.gql(PUBLISH, { title: 'Hi', text: 'from alice' }))).toEqual(['FORBIDDEN']);
    expect(codes(await admin.gql(PUBLISH, { title: '   ', text: 'no title' }))).toEqual(['BAD_USER_INPUT']);
    const published = await admin.gql(PUBLISH, { title: 'Maintenance', text: 'Sunday 02:00 UTC' });
    expect(published.data.publishAnnouncement.announcement).toMatchObject({ title: 'Maintenance', unread: true });
    expect(await tableCounts()).toEqual({ announcements: 1, reads: 0 });
  });

  it('shows them newest first, unread until marked read, per user', async () => {
    await admin.gql(PUBLISH, { title: 'New feature', text: 'Jump to a date' });
    const list = (await alice.gql(LIST, {})).data.viewer;
    expect(list.unreadAnnouncementCount).toBe(2);
    expect(list.announcements.edges.map((e: { node: { title: string; unread: boolean } }) => [e.node.title, e.node.unread])).toEqual([
      ['New feature', true],
      ['Maintenance', true],
    ]);
    const marked = await alice.gql(MARK);
    expect(marked.data.markAnnouncementsRead.readUpTo).toBe(list.announcements.edges[0].node.publishedAt);
    const after = (await alice.gql(LIST, {})).data.viewer;
    expect(after.unreadAnnouncementCount).toBe(0);
    expect(after.announcements.edges.every((e: { node: { unread: boolean } }) => !e.node.unread)).toBe(true);
    // Bob has not read anything.
    expect((await bob.gql(LIST, {})).data.viewer.unreadAnnouncementCount).toBe(2);
    // A later announcement is unread again for alice.
    await admin.gql(PUBLISH, { title: 'Third', text: 'more' });
    expect((await alice.gql(LIST, {})).data.viewer.unreadAnnouncementCount).toBe(1);
    expect((await tableCounts()).reads).toBe(1);
  });

  it('pages with cursors and is reachable through node', async () => {
    const first = (await bob.gql(LIST, { first: 2 })).data.viewer.announcements;
    expect(first.edges.map((e: { node: { title: string } }) => e.node.title)).toEqual(['Third', 'New feature']);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const rest = (await bob.gql(LIST, { first: 2, after: first.pageInfo.endCursor })).data.viewer.announcements;
    expect(rest.edges.map((e: { node: { title: string } }) => e.node.title)).toEqual(['Maintenance']);
    expect(rest.pageInfo.hasNextPage).toBe(false);
    const id = first.edges[0].node.id;
    expect((await bob.gql(NODE, { id })).data.node).toEqual({ id, title: 'Third', unread: true });
    expect(codes(await bob.gql(LIST, { after: 'nonsense' }))).toEqual(['BAD_USER_INPUT']);
    expect(codes(await bob.gql(LIST, { first: 0 }))).toEqual(['BAD_USER_INPUT']);
  });
});
