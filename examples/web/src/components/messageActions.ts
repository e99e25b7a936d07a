import { createContext, useContext } from 'react';
import type { MessageFieldsFragment } from '../gql/graphql';

/** What a message in a list can do beyond itself, given by the view that lists it. */
export interface MessageActions {
  conversationId: string;
  /** Starts a reply to `message` in the view's composer; absent where there is no composer (a permalink, the thread panel). */
  reply?(message: MessageFieldsFragment): void;
  /** Opens the thread panel on a root message. */
  openThread(rootId: string): void;
  /** Set inside the thread panel: its root, which replies there need not quote. */
  threadRootId?: string;
}

export const MessageActionsContext = createContext<MessageActions | null>(null);

export function useMessageActions(): MessageActions {
  const actions = useContext(MessageActionsContext);
  if (!actions) throw new Error('useMessageActions outside a MessageActionsContext provider');
  return actions;
}
