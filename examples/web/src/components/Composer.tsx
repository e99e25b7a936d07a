import { useMutation } from '@apollo/client';
import { type ReactNode, useEffect, useMemo, useRef, useState } from 'react';
import { mentionsIn } from '../mentionTokens';
import { SendMessageMutation } from '../operations';

interface Props {
  conversationId: string;
  /** The conversation's members: an `@<id>` token of one of them mentions them. */
  memberIds: readonly string[];
  /** Send as a reply to this message. */
  replyToId?: string;
  /** The input's accessible name and placeholder. */
  label: string;
  /** The send button's text. */
  button: string;
  /** Shown above the input (what a reply answers). */
  children?: ReactNode;
  onSent?(): void;
}

/**
 * Sends a message (a reply when `replyToId` is set); lists show it from the
 * mutation's answer or the live event, whichever comes first. `@<member id>`
 * and `@everyone` in the text become its mentions (src/mentionTokens.ts),
 * shown under the input before sending.
 */
export function Composer({ conversationId, memberIds, replyToId, label, button, children, onSent }: Props) {
  const [text, setText] = useState('');
  const [sendMessage, { loading, error }] = useMutation(SendMessageMutation);
  const input = useRef<HTMLInputElement>(null);
  const mentions = useMemo(() => mentionsIn(text, memberIds), [text, memberIds]);
  const named = [...mentions.userIds, ...(mentions.everyone ? ['everyone'] : [])];
  useEffect(() => {
    if (replyToId) input.current?.focus();
  }, [replyToId]);
  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        if (!text.trim()) return;
        const clientMsgId = crypto.randomUUID(); // a retry of this send would reuse it
        const variables = {
          id: conversationId,
          clientMsgId,
          text,
          replyToMessageId: replyToId ?? null,
          mentionUserIds: mentions.userIds.length > 0 ? mentions.userIds : null,
          mentionEveryone: mentions.everyone || null,
        };
        void sendMessage({ variables }).then(() => {
          setText('');
          onSent?.();
        }, () => {});
      }}
    >
      {children}
      <div className="row">
        <input ref={input} value={text} onChange={(e) => setText(e.target.value)} placeholder={label} aria-label={label} disabled={loading} />
        <button type="submit" disabled={loading}>
          {button}
        </button>
      </div>
      {named.length > 0 && (
        <span className="mention-preview muted" data-testid="mention-preview">
          Mentions {named.map((name) => `@${name}`).join(' ')}
        </span>
      )}
      {error && <span className="error">{error.message}</span>}
    </form>
  );
}
