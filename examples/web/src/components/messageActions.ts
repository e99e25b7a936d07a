import { createContext, useContext } from 'react';
import type { MessageFieldsFragment } from '../gql/graphql';

/** What a message in a list can do beyond itself, given by the view that lists it. */
export interface MessageActions {
  conversationId: string;
  /** The conversation's members, for the `@` mentions of a composer (empty until they load). */
  memberIds: readonly string[];
  /** The ids of the conversation's pinned messages: a message's Pin button is Unpin for these. */
  pinnedIds: ReadonlySet<string>;
  /** Starts a reply to `message` in the view's composer; absent where there is no composer (a permalink, the thread panel). */
  reply?(message: MessageFieldsFragment): void;
  /** Opens the thread panel on a root message. */
  openThread(rootId: string): void;
  /** Called once `markUnread` moved the read position to just below `seq`: the "new messages" line moves there. */
  markedUnread(seq: number): void;
  /** Set inside the thread panel: its root, which replies there need not quote. */
  threadRootId?: string;
}

export const MessageActionsContext = createContext<MessageActions | null>(null);

export function useMessageActions(): MessageActions {
  const actions = useContext(MessageActionsContext);
  if (!actions) throw new Error('useMessageActions outside a MessageActionsContext provider');
  return actions;
}
