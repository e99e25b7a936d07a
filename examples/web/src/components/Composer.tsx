import { useMutation } from '@apollo/client';
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { SendMessageMutation } from '../operations';

interface Props {
  conversationId: string;
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

/** Sends a message (a reply when `replyToId` is set); lists show it from the mutation's answer or the live event, whichever comes first. */
export function Composer({ conversationId, replyToId, label, button, children, onSent }: Props) {
  const [text, setText] = useState('');
  const [sendMessage, { loading, error }] = useMutation(SendMessageMutation);
  const input = useRef<HTMLInputElement>(null);
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
        void sendMessage({ variables: { id: conversationId, clientMsgId, text, replyToMessageId: replyToId ?? null } }).then(() => {
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
      {error && <span className="error">{error.message}</span>}
    </form>
  );
}
