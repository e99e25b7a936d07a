/**
 * examples/web end to end: the built page in headless Chromium (Debian's
 * `chromium`, driven by playwright-core) against the real server on PGlite.
 * Inbox badges (unread and mention counts), opening at the first unread
 * message with the "new messages" line, a revoked placeholder, infinite
 * scroll both ways, a permalink jump, a live message, a send, search, edits,
 * replies, threads and reactions (the page's own and live ones), stars and
 * the Starred view, pins and the pins strip, mentions (highlighted, listed,
 * sent from the composer) and "mark unread from here", on a server that runs
 * only trusted documents (the page's build manifest). Screenshots go to
 * test/browser/screenshots/ (git-ignored).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, type Harness, startHarness } from '../helpers/harness.ts';
import { CREATE_GROUP, createGroup, MARK_READ, REVOKE, SEND, send } from '../helpers/operations.ts';
import { CHROMIUM, DIST, ensureExampleBuilt, MANIFEST, ROOT, serveStatic } from './webExample.ts';

const SCREENSHOTS = join(ROOT, 'test/browser/screenshots');
const INBOX = `query { viewer { conversations(first: 10) { edges { node { id unreadCount unreadMentionCount } } } } }`;
const OPEN_DIRECT = `mutation ($userId: ID!) { openDirectConversation(userId: $userId) { conversation { id } } }`;
const GROUP_MESSAGES = 120;
const SEARCH_SEQ = 40; // "kangaroo": found by search, far from the newest page
const PERMALINK_SEQ = 20;
const REVOKED_SEQ = 118;
const READ_UP_TO = 80; // Alice has read the group this far
const FIRST_UNREAD_SEQ = 82; // Bob's first message after it (81 is Alice's own)
const MENTION_SEQS = [50, 84, 90, 96]; // Bob's messages that name Alice: one read, three unread
const UNLISTED = 'query Unlisted { viewer { id } }';
const EDIT = `mutation Edit($messageId: ID!, $text: String!) { editMessage(input: { messageId: $messageId, text: $text }) { message { id editedAt } } }`;
const REACT = `mutation React($messageId: ID!, $reaction: String!) { addReaction(input: { messageId: $messageId, reaction: $reaction }) { message { id } } }`;
const SEND_MENTIONING = `mutation SendMentioning($conversationId: ID!, $clientMsgId: String!, $text: String!, $mentionUserIds: [ID!]) {
  sendMessage(input: { conversationId: $conversationId, clientMsgId: $clientMsgId, text: $text, mentionUserIds: $mentionUserIds }) { message { id seq } }
}`;
const PIN = `mutation Pin($messageId: ID!) { pinMessage(input: { messageId: $messageId }) { conversation { id } } }`;
const BOBS_MENTIONS = `query BobsMentions { viewer { mentions(first: 5) { edges { everyone node { id mentions { id } } } } } }`;
const REPLY = `mutation Reply($conversationId: ID!, $clientMsgId: String!, $text: String!, $replyTo: ID!) {
  sendMessage(input: { conversationId: $conversationId, clientMsgId: $clientMsgId, text: $text, replyToMessageId: $replyTo }) { message { id seq } }
}`;

/**
 * The server runs only trusted documents: the page's manifest (written by its
 * build) plus the operations this test seeds with.
 */
function trustedManifest(folder: string): string {
  const page = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Record<string, string>;
  const setup = [CREATE_GROUP, SEND, REVOKE, OPEN_DIRECT, INBOX, EDIT, REACT, REPLY, SEND_MENTIONING, MARK_READ, PIN, BOBS_MENTIONS];
  const entries = setup.map((text) => [`sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`, text]);
  const path = join(folder, 'persisted-documents.json');
  writeFileSync(path, JSON.stringify({ ...page, ...Object.fromEntries(entries) }, null, 2));
  return path;
}

// Say what is missing instead of failing on the first page.goto.
if (!existsSync(CHROMIUM)) {
  throw new Error(
    `test/browser needs headless Chromium at ${CHROMIUM}: install it with ` +
      '`apt-get install -y --no-install-recommends chromium` (as .ci/run does), or set CHROMIUM_PATH.',
  );
}

describe('examples/web in headless Chromium', () => {
  let harness: Harness;
  let folder: string;
  let site: { url: string; close(): Promise<void> };
  let browser: Browser;
  let page: Page;
  let alice: Client;
  let bob: Client;
  let groupId: string;
  let directId: string;
  let bobsGroupId: string;
  /** Bob's message that Alice stars, pins and marks unread from. */
  let keep: { id: string; seq: number };
  const ids = new Map<number, string>();
  const pageErrors: string[] = [];
  /** Every operation text the page sent (HTTP and WebSocket), to check against the trusted-documents manifest. */
  const sentTexts: { name: string; query: string }[] = [];
  /** Every WebSocket frame the page received, in order. */
  const receivedFrames: string[] = [];
  /** The ids of the subscriptions the page has open, by socket: started and neither completed nor closed with it. */
  const subscriptionsBySocket = new Map<object, Set<string>>();
  const openOnPage = () => [...subscriptionsBySocket.values()].flatMap((ids) => [...ids]);

  const shot = async (name: string) => {
    const path = join(SCREENSHOTS, `${name}.png`);
    await page.screenshot({ path });
    console.log(`screenshot: ${path}`);
  };
  const messages = () => page.locator('[data-testid=messages]');
  /** The seqs in the message list, in order; each shown once. */
  const seqsShown = async () => {
    const seqs = await page.$$eval('[data-testid=messages] li[data-seq]', (els) => els.map((el) => Number((el as HTMLElement).dataset.seq)));
    expect(new Set(seqs).size, `a message is shown twice: ${seqs}`).toBe(seqs.length);
    return seqs;
  };
  /** Resolves once the page has run its pending renders (two animation frames). */
  const rendered = () => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  const inboxItem = (id: string) => page.locator(`[data-testid=inbox] li[data-conversation-id="${id}"]`);
  /** Alice's unread and mention counts of each conversation, as the server says now. */
  const inboxCounts = async () =>
    new Map<string, { unreadCount: number; unreadMentionCount: number }>(
      (await alice.gql(INBOX)).data.viewer.conversations.edges.map((e: { node: { id: string; unreadCount: number; unreadMentionCount: number } }) => [e.node.id, e.node]),
    );
  /** The seq of the message right below the "new messages" line (the line must be shown once). */
  const seqBelowLine = async () => {
    expect(await page.getByTestId('unread-line').count()).toBe(1);
    return Number(await page.locator('[data-testid=unread-line] + li').getAttribute('data-seq'));
  };
  /** The seqs of the messages shown as mentioning Alice. */
  const mentionedSeqs = () => page.$$eval('[data-testid=messages] li.mentioned', (els) => els.map((el) => Number((el as HTMLElement).dataset.seq)));
  /** The message ids of the pins strip, in order. */
  const pinnedIds = () => page.$$eval('[data-testid=pins] li', (els) => els.map((el) => (el as HTMLElement).dataset.messageId));
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
  /** Opens `hash` once the page's subscriptions are those of the view it shows, and the server counts it: events sent after this arrive live. */
  const openLive = async (hash: string, shown: string) => {
    const before = openOnPage();
    await page.evaluate((h) => (window.location.hash = h), hash);
    await page.locator(shown).waitFor();
    await expect.poll(() => openOnPage().map((id) => (before.includes(id) ? 'the last view’s' : 'new'))).toEqual(['new']);
    await expect.poll(() => harness.openSubscriptions(), { timeout: 10_000 }).toBe(1);
  };
  /** Whether `selector` lies fully inside the scrolling message list's visible area. */
  const inView = (selector: string) =>
    page.$eval(selector, (el) => {
      const r = el.getBoundingClientRect();
      const box = el.closest('[data-testid=messages]')!.getBoundingClientRect();
      return r.top >= box.top && r.bottom <= box.bottom;
    });

  beforeAll(async () => {
    console.log(ensureExampleBuilt());
    folder = mkdtempSync(join(tmpdir(), 'backscroll-web-'));
    harness = await startHarness('pglite', { TRUSTED_DOCUMENTS: trustedManifest(folder), TRUSTED_DOCUMENTS_ONLY: 'true' });
    alice = await harness.client('alice');
    bob = await harness.client('bob');

    // A group of 120 messages from two users (seq 118 revoked; four of Bob's name Alice), read by Alice
    // up to seq 80; a direct conversation with 3 unread; and Bob's own group, where Alice may not pin.
    groupId = (await createGroup(alice, ['bob'], 'Project chat')).id;
    for (let seq = 1; seq <= GROUP_MESSAGES; seq++) {
      const from = seq % 2 === 0 ? bob : alice;
      let sent: { id: string; seq: number };
      if (MENTION_SEQS.includes(seq)) {
        const text = `@alice, message ${seq} from bob needs you`;
        const response = await bob.gql(SEND_MENTIONING, { conversationId: groupId, clientMsgId: `seed-${seq}`, text, mentionUserIds: ['alice'] });
        expect(response.errors).toBeUndefined();
        sent = response.data.sendMessage.message;
      } else {
        const text = seq === SEARCH_SEQ ? 'The quarterly kangaroo report is ready for review' : `Message ${seq} from ${from.userId}`;
        sent = await send(from, groupId, text, `seed-${seq}`);
      }
      expect(sent.seq).toBe(seq);
      ids.set(seq, sent.id);
    }
    const revoked = await bob.gql(REVOKE, { messageId: ids.get(REVOKED_SEQ) });
    expect(revoked.errors).toBeUndefined();
    expect((await alice.gql(MARK_READ, { conversationId: groupId, seq: READ_UP_TO })).errors).toBeUndefined();
    directId = (await bob.gql(OPEN_DIRECT, { userId: 'alice' })).data.openDirectConversation.conversation.id;
    for (const text of ['Hi Alice', 'Are you there?', 'Lunch at noon?']) await send(bob, directId, text);
    bobsGroupId = (await createGroup(bob, ['alice'], 'Bob’s group')).id;
    await send(bob, bobsGroupId, 'Pin me if you can');

    site = await serveStatic(DIST);
    mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // The machine notes' flags: root needs --no-sandbox; the rest keep Chromium off the (closed) network.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: { width: 1100, height: 720 } });
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(`${message.text()} (${message.location().url})`);
    });
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().startsWith(harness.server.url)) {
        const body = request.postDataJSON() as { operationName: string; query: string };
        sentTexts.push({ name: body.operationName, query: body.query });
      }
    });
    page.on('websocket', (socket) => {
      const open = new Set<string>();
      subscriptionsBySocket.set(socket, open);
      socket.on('close', () => subscriptionsBySocket.delete(socket));
      socket.on('framesent', ({ payload }) => {
        const message = JSON.parse(String(payload)) as { id?: string; type: string; payload?: { operationName: string; query: string } };
        if (message.type === 'subscribe') sentTexts.push({ name: message.payload!.operationName, query: message.payload!.query });
        if (message.type === 'subscribe') open.add(message.id!);
        if (message.type === 'complete') open.delete(message.id!);
      });
      socket.on('framereceived', ({ payload }) => receivedFrames.push(String(payload)));
    });
    const query = new URLSearchParams({ server: harness.server.url, token: alice.token });
    await page.goto(`${site.url}?${query}`);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await harness?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('lists the conversations with their unread and mention badges', async () => {
    const expected = await inboxCounts();
    expect(expected.get(directId)).toEqual({ id: directId, unreadCount: 3, unreadMentionCount: 0 });
    expect(expected.get(groupId)!.unreadCount).toBeGreaterThan(0);
    expect(expected.get(groupId)!.unreadMentionCount).toBe(3); // seq 50 was read
    await inboxItem(groupId).waitFor();
    expect(await page.locator('[data-testid=inbox] li').count()).toBe(3);
    expect(await inboxItem(directId).locator('[data-testid=unread]').textContent()).toBe('3');
    expect(await inboxItem(groupId).locator('[data-testid=unread]').textContent()).toBe(String(expected.get(groupId)!.unreadCount));
    expect(await inboxItem(groupId).getByTestId('mention-count').textContent()).toBe('@3');
    expect(await inboxItem(directId).getByTestId('mention-count').count()).toBe(0);
    expect(await inboxItem(groupId).locator('.name').textContent()).toBe('Project chat');
    expect(await inboxItem(directId).locator('.name').textContent()).toBe('bob');
    expect(await inboxItem(bobsGroupId).locator('.name').textContent()).toBe('Bob’s group');
    await shot('inbox');
  });

  it('opens the group at its first unread message under the "new messages" line, highlights the mentions, and clears the badges as it is read', async () => {
    await inboxItem(groupId).locator('a').click();
    await page.getByTestId('unread-line').waitFor();
    expect(await seqBelowLine()).toBe(FIRST_UNREAD_SEQ);
    expect(await inView('[data-testid=unread-line]')).toBe(true);
    // One request: 10 read messages above the line and 20 below it, not the newest page.
    expect(await seqsShown()).toEqual(range(FIRST_UNREAD_SEQ - 10, FIRST_UNREAD_SEQ + 20));
    expect(await mentionedSeqs()).toEqual(MENTION_SEQS.filter((seq) => seq > READ_UP_TO));
    expect(await page.locator(`li[data-seq="${MENTION_SEQS[1]}"] [data-testid=mentions]`).textContent()).toBe('@alice');
    // Shown is read, up to seq 102: every mention is read, not yet every message.
    await inboxItem(groupId).getByTestId('mention-count').waitFor({ state: 'detached' });
    await expect.poll(async () => (await inboxCounts()).get(groupId)!.unreadMentionCount).toBe(0);
    expect((await inboxCounts()).get(groupId)!.unreadCount).toBeGreaterThan(0);
    expect(await inboxItem(groupId).locator('[data-testid=unread]').count()).toBe(1);
    await shot('first-unread');
    // Scrolling down pages on from the jump to the newest message, which marks everything read.
    for (;;) {
      await messages().getByText(/^Loading newer messages…$/).waitFor({ state: 'detached' });
      if (await page.locator(`li[data-seq="${GROUP_MESSAGES}"]`).count()) break;
      const newest = Math.max(...(await seqsShown()));
      await messages().evaluate((el) => (el.scrollTop = el.scrollHeight));
      await page.locator(`li[data-seq="${newest + 1}"]`).waitFor({ state: 'attached' });
    }
    expect(await seqsShown()).toEqual(range(FIRST_UNREAD_SEQ - 10, GROUP_MESSAGES));
    await page.locator(`li[data-seq="${REVOKED_SEQ}"] [data-testid=revoked]`).waitFor();
    expect(await page.locator(`li[data-seq="${REVOKED_SEQ}"]`).textContent()).toContain('This message was revoked');
    expect(await seqBelowLine()).toBe(FIRST_UNREAD_SEQ); // the line stays where the reading started
    await inboxItem(groupId).locator('[data-testid=unread]').waitFor({ state: 'detached' });
  });

  it('loads older messages when scrolled to the top, keeping the view in place', async () => {
    const before = Math.min(...(await seqsShown()));
    await messages().evaluate((el) => (el.scrollTop = 0));
    await page.waitForFunction((seq) => !!document.querySelector(`li[data-seq="${seq}"]`), before - 1);
    // The page grew on top, and the message that was at the top is still near it, not jumped away.
    expect(await messages().evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
    // Keep scrolling up to the very first message: each time the list is idle
    // (a scroll while a page loads is ignored), then until an older message shows.
    const historyStart = page.getByTestId('history-start');
    for (;;) {
      await historyStart.getByRole('button', { name: 'Load older' }).or(historyStart.getByText('Beginning of the conversation')).waitFor();
      if (await page.locator('li[data-seq="1"]').count()) break;
      const oldest = Math.min(...(await seqsShown()));
      await messages().evaluate((el) => (el.scrollTop = 0));
      await page.locator(`li[data-seq="${oldest - 1}"]`).waitFor({ state: 'attached' });
    }
    expect(await page.getByTestId('history-start').textContent()).toBe('Beginning of the conversation');
    const seqs = await seqsShown();
    expect(seqs).toEqual(Array.from({ length: GROUP_MESSAGES }, (_, i) => i + 1));
  });

  it('jumps to an old message from a permalink and highlights it', async () => {
    const id = ids.get(PERMALINK_SEQ)!;
    await page.evaluate((hash) => (window.location.hash = hash), `#/c/${encodeURIComponent(groupId)}/m/${encodeURIComponent(id)}`);
    const target = `li.highlight[data-message-id="${id}"]`;
    await page.locator(target).waitFor();
    expect(await page.locator(target).getAttribute('data-seq')).toBe(String(PERMALINK_SEQ));
    expect(await inView(target)).toBe(true);
    const seqs = await seqsShown();
    expect(Math.max(...seqs)).toBeLessThan(GROUP_MESSAGES); // a page around it, not the newest
    expect(Math.min(...seqs)).toBeGreaterThan(1);
    await shot('permalink');
    // Paging on from the jump: up to the first message, down past where the jump page ended.
    await messages().evaluate((el) => (el.scrollTop = 0));
    await page.locator('li[data-seq="1"]').waitFor({ state: 'attached' });
    const below = Math.max(...(await seqsShown()));
    await messages().evaluate((el) => (el.scrollTop = el.scrollHeight));
    await page.locator(`li[data-seq="${below + 1}"]`).waitFor({ state: 'attached' });
    // Idle in both directions: a second fetch of the same page would show here as a duplicate.
    await messages().getByText(/^Loading (older|newer) messages…$/).waitFor({ state: 'detached' });
    const paged = await seqsShown();
    expect(paged).toEqual(Array.from({ length: paged.length }, (_, i) => i + 1)); // contiguous from seq 1
  });

  it('shows a message the other user sends, live', async () => {
    const before = openOnPage();
    await page.evaluate((hash) => (window.location.hash = hash), `#/c/${encodeURIComponent(groupId)}`);
    await page.locator(`li[data-seq="${GROUP_MESSAGES}"]`).waitFor();
    // The view subscribes as it opens (more than once, as its effects rerun)
    // and the permalink view's subscription ends, all in frames on one socket,
    // which the server handles in order: once the page has just one new
    // subscription open, send when the server counts one.
    await expect.poll(() => openOnPage().map((id) => (before.includes(id) ? 'the permalink view’s' : 'new'))).toEqual(['new']);
    await expect.poll(() => harness.openSubscriptions(), { timeout: 10_000 }).toBe(1);
    const text = 'Live: bob says hello while Alice watches';
    const sent = await send(bob, groupId, text, 'live');
    await page.locator(`li[data-seq="${sent.seq}"]`).waitFor();
    expect(await page.locator(`li[data-seq="${sent.seq}"] .text`).textContent()).toBe(text);
    expect(await inView(`li[data-seq="${sent.seq}"]`)).toBe(true);
    // Alice's own send shows once (from the live event or the catch-up after the mutation, never both).
    const ownText = 'Thanks Bob, sent from the page';
    await page.getByRole('textbox', { name: 'Message' }).fill(ownText);
    // The catch-up after a send: the page after the list's end.
    const caughtUp = page.waitForResponse((response) => {
      const body = response.request().postDataJSON();
      return body?.operationName === 'ConversationPage' && body.variables.after != null;
    });
    await page.getByRole('button', { name: 'Send' }).click();
    const own = page.locator('li.message.own', { hasText: ownText });
    await own.waitFor();
    // Both ways it can arrive have landed (the catch-up after the send and the live event), and rendered.
    await caughtUp;
    await expect.poll(() => receivedFrames.some((frame) => frame.includes(ownText))).toBe(true);
    await rendered();
    expect(await own.count()).toBe(1);
    expect(await page.getByRole('textbox', { name: 'Message' }).inputValue()).toBe('');
    // The inbox preview follows the open conversation.
    expect(await inboxItem(groupId).locator('.preview').textContent()).toContain('Thanks Bob');
    await shot('conversation');
  });

  it('searches, shows highlighted snippets and jumps to the hit', async () => {
    await page.getByRole('searchbox', { name: 'Search messages' }).fill('kangaroo');
    await page.getByRole('searchbox', { name: 'Search messages' }).press('Enter');
    const result = page.locator('[data-testid=search-results] li.result');
    await result.first().waitFor();
    expect(await result.count()).toBe(1);
    expect(await result.locator('mark').textContent()).toBe('kangaroo');
    expect(await result.locator('.snippet').textContent()).toBe('The quarterly kangaroo report is ready for review');
    await shot('search');
    await result.locator('a').click();
    const target = `li.highlight[data-message-id="${ids.get(SEARCH_SEQ)}"]`;
    await page.locator(target).waitFor();
    expect(await inView(target)).toBe(true);
  });

  it('edits, replies, threads and reactions: by clicking, and live from the other user', async () => {
    // Two fresh messages at the end of the group: Alice's to edit and react to, Bob's to reply to.
    const mine = await send(alice, groupId, 'Draft: ship on Thursday', 'edit-me');
    const theirs = await send(bob, groupId, 'What do we ship on Friday?', 'reply-to-me');
    const before = openOnPage();
    await page.evaluate((hash) => (window.location.hash = hash), `#/c/${encodeURIComponent(groupId)}`);
    const list = page.getByTestId('conversation');
    const item = (id: string) => list.locator(`li[data-message-id="${id}"]`);
    await item(theirs.id).waitFor();
    // Live: once the new view's subscription is the only one and the server counts it (as in the live test above).
    await expect.poll(() => openOnPage().map((id) => (before.includes(id) ? 'the permalink view’s' : 'new'))).toEqual(['new']);
    await expect.poll(() => harness.openSubscriptions(), { timeout: 10_000 }).toBe(1);

    // Bob edits his message and reacts to Alice's: MESSAGE_EDITED and REACTIONS_CHANGED update them in place.
    expect((await bob.gql(EDIT, { messageId: theirs.id, text: 'What do we ship on Friday, exactly?' })).errors).toBeUndefined();
    await item(theirs.id).locator('.text', { hasText: 'What do we ship on Friday, exactly?' }).waitFor();
    await item(theirs.id).getByTestId('edited').waitFor();
    expect((await bob.gql(REACT, { messageId: mine.id, reaction: '🎉' })).errors).toBeUndefined();
    const party = item(mine.id).locator('[data-reaction="🎉"]');
    await party.filter({ hasText: /^🎉 1$/ }).waitFor();
    expect(await party.getAttribute('aria-pressed')).toBe('false');

    // Alice edits her own message: the new text and the edited mark, with the time as its title.
    expect(await item(theirs.id).getByRole('button', { name: 'Edit', exact: true }).count()).toBe(0); // not hers
    await item(mine.id).getByRole('button', { name: 'Edit', exact: true }).click();
    await item(mine.id).getByRole('textbox', { name: 'Edit message' }).fill('Final: ship on Friday');
    await item(mine.id).getByRole('textbox', { name: 'Edit message' }).press('Enter');
    await item(mine.id).locator('.text', { hasText: 'Final: ship on Friday' }).waitFor();
    expect(await item(mine.id).getByTestId('edited').getAttribute('title')).toMatch(/^edited /);

    // Alice replies to Bob's message from the composer: the reply quotes the original as it is now.
    await item(theirs.id).getByRole('button', { name: 'Reply', exact: true }).click();
    await page.getByTestId('replying').getByText('What do we ship on Friday, exactly?').waitFor();
    await page.getByRole('textbox', { name: 'Message', exact: true }).fill('The thread panel, Bob');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const reply = list.locator('li.message.own', { hasText: 'The thread panel, Bob' });
    await reply.getByTestId('quote').filter({ hasText: 'What do we ship on Friday, exactly?' }).waitFor();
    await page.getByTestId('replying').waitFor({ state: 'detached' });
    const replySeq = Number(await reply.getAttribute('data-seq'));
    const replyId = (await reply.getAttribute('data-message-id'))!;

    // Bob's message is a thread root now: "1 reply" opens the panel, which marks the thread read up to the reply.
    const marked = page.waitForRequest((request) => request.postDataJSON()?.operationName === 'MarkThreadRead');
    await item(theirs.id).getByTestId('thread-link').filter({ hasText: /^1 reply/ }).click();
    const thread = page.getByTestId('thread');
    await thread.getByTestId('thread-replies').locator('li', { hasText: 'The thread panel, Bob' }).waitFor();
    expect((await marked).postDataJSON().variables).toEqual({ id: theirs.id, seq: replySeq });

    // Bob answers Alice's reply (a reply to a reply, so in the same thread): it arrives live in the panel, quoting hers.
    expect((await bob.gql(REPLY, { conversationId: groupId, clientMsgId: 'thread-bob', text: 'Sounds good to me', replyTo: replyId })).errors).toBeUndefined();
    const bobs = thread.getByTestId('thread-replies').locator('li', { hasText: 'Sounds good to me' });
    await bobs.getByTestId('quote').filter({ hasText: 'The thread panel, Bob' }).waitFor();
    // And Alice answers in the thread's own box.
    await thread.getByRole('textbox', { name: 'Reply in thread' }).fill('Great, see you Friday');
    await thread.getByRole('button', { name: 'Send reply' }).click();
    await thread.getByTestId('thread-replies').locator('li.own', { hasText: 'Great, see you Friday' }).waitFor();
    await item(theirs.id).getByTestId('thread-link').filter({ hasText: /^3 replies/ }).waitFor();
    await shot('thread');
    await thread.getByRole('button', { name: 'Close thread' }).click();
    await thread.waitFor({ state: 'detached' });

    // Reactions: the picker adds Alice's 👍 (highlighted, counted); clicking the group takes it back.
    await item(mine.id).getByRole('button', { name: 'React with 👍' }).click();
    const thumbs = item(mine.id).locator('[data-reaction="👍"]');
    await thumbs.filter({ hasText: /^👍 1$/ }).waitFor();
    expect(await thumbs.getAttribute('aria-pressed')).toBe('true');
    await shot('reactions');
    await thumbs.click();
    await thumbs.waitFor({ state: 'detached' });
    expect(await party.textContent()).toBe('🎉 1'); // Bob's stays
  });

  it('stars a message from its row, and the Starred view lists it and jumps to it', async () => {
    const starred = page.getByTestId('starred');
    await page.getByRole('link', { name: 'Starred' }).click();
    await starred.getByText(/^Nothing starred/).waitFor();
    // Sent once the group is closed, so it stays unread.
    keep = await send(bob, groupId, 'Keep this: the launch checklist', 'star-me');
    // The group opens at Bob's new message, its one unread.
    await inboxItem(groupId).locator('a').click();
    const row = page.locator(`[data-testid=messages] li[data-message-id="${keep.id}"]`);
    await row.waitFor();
    expect(await seqBelowLine()).toBe(keep.seq);
    await row.getByRole('button', { name: 'Star', exact: true }).click();
    // The answer's starredByMe turns it on.
    await row.getByRole('button', { name: 'Unstar' }).waitFor();
    expect(await row.getByRole('button', { name: 'Unstar' }).getAttribute('aria-pressed')).toBe('true');
    await page.getByRole('link', { name: 'Starred' }).click();
    await starred.locator('li').first().waitFor();
    expect(await starred.locator('li').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.messageId))).toEqual([keep.id]);
    expect(await starred.locator('li .snippet').textContent()).toBe('Keep this: the launch checklist');
    await shot('starred');
    await starred.locator('li a').click();
    const target = page.locator(`li.highlight[data-message-id="${keep.id}"]`);
    await target.waitFor();
    expect(await inView(`li.highlight[data-message-id="${keep.id}"]`)).toBe(true);
    // Unstarred where it was jumped to, it leaves the list.
    await target.getByRole('button', { name: 'Unstar' }).click();
    await target.getByRole('button', { name: 'Star', exact: true }).waitFor();
    await page.getByRole('link', { name: 'Starred' }).click();
    await starred.getByText(/^Nothing starred/).waitFor();
    expect(await starred.locator('li').count()).toBe(0);
  });

  it('pins a message into the pins strip, shows a pin made elsewhere live, jumps from a pin, and says when a pin is refused', async () => {
    await openLive(`#/c/${encodeURIComponent(groupId)}`, `[data-testid=messages] li[data-message-id="${keep.id}"]`);
    const row = page.locator(`[data-testid=messages] li[data-message-id="${keep.id}"]`);
    expect(await page.getByTestId('pins').count()).toBe(0);
    await row.getByRole('button', { name: 'Pin', exact: true }).click();
    await page.getByTestId('pins').waitFor();
    expect(await pinnedIds()).toEqual([keep.id]);
    await row.getByTestId('pinned').waitFor();
    expect(await row.getByRole('button', { name: 'Unpin' }).count()).toBe(1);
    // Alice pins the kangaroo report from another device: MESSAGE_PINNED arrives live, most recently pinned first.
    expect((await alice.gql(PIN, { messageId: ids.get(SEARCH_SEQ) })).errors).toBeUndefined();
    await expect.poll(pinnedIds).toEqual([ids.get(SEARCH_SEQ), keep.id]);
    expect(await page.getByTestId('pins').locator('li').first().textContent()).toBe('bob The quarterly kangaroo report is ready for review');
    await shot('pins');
    await page.getByTestId('pins').locator(`li[data-message-id="${ids.get(SEARCH_SEQ)}"] a`).click();
    const jumped = `li.highlight[data-message-id="${ids.get(SEARCH_SEQ)}"]`;
    await page.locator(jumped).waitFor();
    expect(await inView(jumped)).toBe(true);
    // Unpinned where it was jumped to, it leaves the strip.
    await page.locator(jumped).getByRole('button', { name: 'Unpin' }).click();
    await expect.poll(pinnedIds).toEqual([keep.id]);
    // In Bob's group only Bob (its owner) may pin: the page shows the refusal and pins nothing.
    await inboxItem(bobsGroupId).locator('a').click();
    const bobs = page.locator('[data-testid=messages] li', { hasText: 'Pin me if you can' });
    await bobs.getByRole('button', { name: 'Pin', exact: true }).click();
    await bobs.getByTestId('pin-error').waitFor();
    expect(await bobs.getByTestId('pin-error').getAttribute('data-code')).toBe('FORBIDDEN');
    expect(await page.getByTestId('pins').count()).toBe(0);
  });

  it('lists the messages that mention Alice, jumps to one, and mentions members and everyone from the composer', async () => {
    const list = page.getByTestId('mention-list');
    await page.getByRole('link', { name: 'Mentions' }).click();
    await list.locator('li').first().waitFor();
    const newestFirst = [...MENTION_SEQS].reverse().map((seq) => ids.get(seq));
    expect(await list.locator('li').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.messageId))).toEqual(newestFirst);
    await shot('mentions');
    await list.locator(`li[data-message-id="${ids.get(MENTION_SEQS[0]!)}"] a`).click();
    await page.locator(`li.highlight.mentioned[data-message-id="${ids.get(MENTION_SEQS[0]!)}"]`).waitFor();

    // @bob names a member and @everyone everyone (Alice owns the group); @carol is no member, so stays text.
    await page.evaluate((hash) => (window.location.hash = hash), `#/c/${encodeURIComponent(groupId)}`);
    const text = 'Release notes are pinned, @bob and @everyone (cc @carol)';
    await page.getByRole('textbox', { name: 'Message', exact: true }).fill(text);
    expect(await page.getByTestId('mention-preview').textContent()).toBe('Mentions @bob @everyone');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const sent = page.locator('[data-testid=messages] li.own', { hasText: text });
    // Drawn from the server's answer: its mentions as stored.
    await sent.getByTestId('mentions').filter({ hasText: /^@bob @everyone$/ }).waitFor();
    expect(await sent.getAttribute('class')).not.toMatch(/\bmentioned\b/); // her own message
    await page.getByTestId('mention-preview').waitFor({ state: 'detached' });
    const bobsNewest = (await bob.gql(BOBS_MENTIONS)).data.viewer.mentions.edges[0];
    expect(bobsNewest).toEqual({ everyone: true, node: { id: await sent.getAttribute('data-message-id'), mentions: [{ id: 'bob' }] } });
  });

  it('marks unread from a message: the line moves there, the badge comes back, and the group opens there again', async () => {
    const row = page.locator(`[data-testid=messages] li[data-message-id="${keep.id}"]`);
    await row.getByRole('button', { name: 'Mark unread' }).click();
    await expect.poll(seqBelowLine).toBe(keep.seq);
    const counts = (await inboxCounts()).get(groupId)!;
    expect(counts.unreadCount).toBe(1); // Bob's message; Alice's own after it do not count
    await inboxItem(groupId).locator('[data-testid=unread]').filter({ hasText: /^1$/ }).waitFor();
    // The direct conversation opens at Bob's first message, all three unread.
    await inboxItem(directId).locator('a').click();
    await page.locator('[data-testid=messages] li', { hasText: 'Hi Alice' }).waitFor();
    expect(await page.locator('[data-testid=unread-line] + li .text').textContent()).toBe('Hi Alice');
    // Back in the group: it opens at the message marked unread, and reading it clears the badge again.
    await inboxItem(groupId).locator('a').click();
    await row.waitFor();
    expect(await seqBelowLine()).toBe(keep.seq);
    expect(await inView('[data-testid=unread-line]')).toBe(true);
    await inboxItem(groupId).locator('[data-testid=unread]').waitFor({ state: 'detached' });
    await shot('marked-unread');
  });

  it('logged no errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });

  it('sent only operations of the trusted-documents manifest, as their exact text', () => {
    const trusted = new Set(Object.values(JSON.parse(readFileSync(MANIFEST, 'utf8')) as Record<string, string>));
    const names = new Set(sentTexts.map((s) => s.name));
    const expected = [
      ...['Inbox', 'ConversationPage', 'ConversationDetails', 'ConversationEvents', 'MarkRead', 'SendMessage', 'Search'],
      ...['EditMessage', 'Thread', 'MarkThreadRead', 'AddReaction', 'RemoveReaction'],
      ...['StarMessage', 'UnstarMessage', 'StarredMessages', 'PinMessage', 'UnpinMessage', 'Mentions', 'MarkUnread'],
    ];
    for (const name of expected) {
      expect(names, `the page never sent ${name}`).toContain(name);
    }
    expect(sentTexts.filter((s) => !trusted.has(s.query))).toEqual([]);
  });

  it('ran against a server that refuses anything else', async () => {
    const refused = await alice.gql(UNLISTED);
    expect([refused.status, refused.errors?.[0]?.extensions?.code]).toEqual([400, 'QUERY_NOT_IN_SAFELIST']);
  });
});
