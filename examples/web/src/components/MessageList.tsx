import { Fragment, useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { MessageFieldsFragment, PageInfoFieldsFragment } from '../gql/graphql';
import { MessageItem } from './MessageItem';

/** One edge of a conversation's history as the views keep it. */
export interface Edge {
  __typename: 'MessageEdge';
  cursor: string;
  node: MessageFieldsFragment;
}

interface Props {
  edges: readonly Edge[];
  pageInfo: PageInfoFieldsFragment;
  viewerId?: string;
  /** A permalink's message: highlighted, and placed mid-view when the list opens. */
  anchorId?: string;
  /** The first unread message's seq: the "new messages" line goes above it, near the top of the view when the list opens. */
  unreadFromSeq?: number | null;
  onOlder(): Promise<void>;
  onNewer?(): Promise<void>;
}

/**
 * Where the "new messages" line goes: before the first edge at or after
 * `seq`, unless that is the first edge shown and older messages not yet
 * loaded might be unread too (the line would then be a guess). -1: nowhere.
 */
function unreadLineIndex(edges: readonly Edge[], seq: number | null | undefined, hasPreviousPage: boolean): number {
  if (seq == null) return -1;
  const index = edges.findIndex((edge) => edge.node.seq >= seq);
  if (index > 0) return index;
  return index === 0 && (edges[0]!.node.seq === seq || !hasPreviousPage) ? 0 : -1;
}

/**
 * The scrolling list. It opens at the permalink's message, at the "new
 * messages" line, or at the bottom. Reaching the top loads the older page
 * and keeps the same messages in view; new messages at the bottom scroll
 * into view when the reader is already at the bottom.
 */
export function MessageList({ edges, pageInfo, viewerId, anchorId, unreadFromSeq, onOlder, onNewer }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const [busy, setBusy] = useState<'older' | 'newer' | null>(null);
  const busyRef = useRef(false);
  const seen = useRef({ first: undefined as string | undefined, last: undefined as string | undefined, height: 0, top: 0, atBottom: true, placed: false });
  const first = edges[0]?.cursor;
  const last = edges.at(-1)?.cursor;
  const lineIndex = unreadLineIndex(edges, unreadFromSeq, pageInfo.hasPreviousPage);

  // The cursor last paged from in each direction: a scroll event handled before the
  // re-render still sees the old cursor, and must not fetch the same page again.
  const requested = useRef({ older: null as string | null, newer: null as string | null });
  const load = useCallback(async (which: 'older' | 'newer') => {
    const run = which === 'older' ? onOlder : onNewer;
    const cursor = which === 'older' ? pageInfo.startCursor : pageInfo.endCursor;
    if (!run || busyRef.current || requested.current[which] === cursor) return;
    busyRef.current = true;
    requested.current[which] = cursor;
    setBusy(which);
    try {
      await run();
    } catch {
      requested.current[which] = null; // let the next scroll try again
    } finally {
      busyRef.current = false;
      setBusy(null);
    }
  }, [onOlder, onNewer, pageInfo.startCursor, pageInfo.endCursor]);

  const check = useCallback(() => {
    const el = box.current;
    if (!el) return;
    const s = seen.current;
    s.top = el.scrollTop;
    s.height = el.scrollHeight;
    s.atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
    if (!s.placed) return;
    if (el.scrollTop < 80 && pageInfo.hasPreviousPage) void load('older');
    else if (onNewer && s.atBottom && pageInfo.hasNextPage) void load('newer');
  }, [load, onNewer, pageInfo.hasPreviousPage, pageInfo.hasNextPage]);

  useLayoutEffect(() => {
    const el = box.current;
    if (!el || edges.length === 0) return;
    const s = seen.current;
    if (!s.placed) {
      const anchor = anchorId ? el.querySelector<HTMLElement>(`[data-message-id="${CSS.escape(anchorId)}"]`) : null;
      const line = el.querySelector<HTMLElement>('[data-testid=unread-line]');
      if (anchor) el.scrollTop = anchor.offsetTop - el.clientHeight / 2 + anchor.clientHeight / 2;
      // Past the line is what is new: start reading there, with a little of what came before.
      else if (line) el.scrollTop = line.offsetTop - 60;
      else el.scrollTop = el.scrollHeight;
      s.placed = true;
    } else if (s.first !== first && s.last === last) {
      // Older messages were put on top: keep what the reader was looking at in place.
      el.scrollTop = s.top + (el.scrollHeight - s.height);
    } else if (s.last !== last && s.first === first && s.atBottom && !pageInfo.hasNextPage) {
      el.scrollTop = el.scrollHeight;
    }
    s.first = first;
    s.last = last;
    check();
  }, [first, last, edges.length, anchorId, pageInfo.hasNextPage, check]);

  // The list shrinks when something appears above or below it (the pins, a reply line): a reader at the bottom stays there.
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const observer = new ResizeObserver(() => {
      if (seen.current.placed && seen.current.atBottom) el.scrollTop = el.scrollHeight;
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  return (
    <div className="messages" ref={box} onScroll={check} data-testid="messages">
      <p className="edge muted" data-testid="history-start">
        {pageInfo.hasPreviousPage ? (busy === 'older' ? 'Loading older messages…' : <button onClick={() => void load('older')}>Load older</button>) : 'Beginning of the conversation'}
      </p>
      <ul>
        {edges.map(({ node }, index) => (
          <Fragment key={node.id}>
            {index === lineIndex && (
              <li className="unread-line" data-testid="unread-line" role="separator">
                <span>New messages</span>
              </li>
            )}
            <MessageItem message={node} viewerId={viewerId} highlighted={node.id === anchorId} />
          </Fragment>
        ))}
      </ul>
      {pageInfo.hasNextPage && (
        <p className="edge muted">{busy === 'newer' ? 'Loading newer messages…' : <button onClick={() => void load('newer')}>Load newer</button>}</p>
      )}
    </div>
  );
}
