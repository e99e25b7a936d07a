/** Every operation the page sends. Codegen turns these into typed documents and the trusted-documents manifest. */
import { graphql } from './gql';

// Fragments are spread by name in the operations below; codegen reads these calls, nothing else needs the values.

/**
 * A message as the page draws it. `replyTo` selects `content` exactly as the
 * message itself does, so a quoted original written to the cache never
 * leaves a shown message with fewer fields; both are written out inline
 * because the server limits depth (MAX_QUERY_DEPTH, 12) and a named
 * fragment spread counts two levels: the inbox's `lastMessage` reaches 12.
 * `threadRoot` is here so that a new reply, whichever way it arrives (a page,
 * a mutation's answer, a live event), updates its root's counts in the cache.
 */
const MessageFields = graphql(`
  fragment MessageFields on Message {
    id
    seq
    createdAt
    editedAt
    sender { id }
    content {
      ... on TextContent { text }
      ... on RevokedContent { revokedAt revokedBy { id } }
      ... on PurgedContent { purgedAt }
    }
    replyTo {
      id
      seq
      sender { id }
      content {
        ... on TextContent { text }
        ... on RevokedContent { revokedAt revokedBy { id } }
        ... on PurgedContent { purgedAt }
      }
    }
    replyToUnavailable
    threadRoot { id replyCount threadUnreadCount }
    replyCount
    threadUnreadCount
    reactions { reaction count reactedByMe }
  }
`);

const PageInfoFields = graphql(`
  fragment PageInfoFields on PageInfo { hasPreviousPage hasNextPage startCursor endCursor }
`);

export const InboxQuery = graphql(`
  query Inbox {
    viewer {
      id
      conversations(first: 50) {
        edges {
          cursor
          node {
            id
            kind
            title
            unreadCount
            unreadCountCapped
            readSeq
            lastActivityAt
            members(first: 5) { edges { node { user { id } } } }
            lastMessage { ...MessageFields }
          }
        }
      }
    }
  }
`);

/** The newest page (no `before`), or the page older than `before`: Conversation.messages is merged by relayStylePagination. */
export const ConversationPageQuery = graphql(`
  query ConversationPage($id: ID!, $last: Int!, $before: String) {
    conversation(id: $id) {
      id
      kind
      title
      messages(last: $last, before: $before) {
        edges { cursor node { ...MessageFields } }
        pageInfo { ...PageInfoFields }
        latestSeq
      }
    }
  }
`);

/**
 * A permalink: the page around one message, in one request; with a cursor
 * (and `around` left as it was) the pages on from it, which
 * relayStylePagination(['around']) merges into the permalink's own list.
 */
export const ConversationAroundQuery = graphql(`
  query ConversationAround($id: ID!, $around: ID!, $first: Int, $last: Int, $after: String, $before: String) {
    conversation(id: $id) {
      id
      kind
      title
      messages(around: $around, first: $first, last: $last, after: $after, before: $before) {
        edges { cursor node { ...MessageFields } }
        pageInfo { ...PageInfoFields }
        latestSeq
        anchorFound
      }
    }
  }
`);

/** What follows a page's end: catching up after a send or a reconnect. */
export const MessagesAfterQuery = graphql(`
  query MessagesAfter($id: ID!, $first: Int!, $after: String!) {
    conversation(id: $id) {
      id
      messages(first: $first, after: $after) {
        edges { cursor node { ...MessageFields } }
        pageInfo { ...PageInfoFields }
      }
    }
  }
`);

export const ConversationEventsSubscription = graphql(`
  subscription ConversationEvents($id: ID!) {
    conversationEvents(conversationId: $id) {
      kind
      seq
      cursor
      message { ...MessageFields }
    }
  }
`);

export const MarkReadMutation = graphql(`
  mutation MarkRead($id: ID!, $seq: Seq!) {
    markRead(input: { conversationId: $id, seq: $seq }) {
      conversation { id readSeq unreadCount unreadCountCapped }
    }
  }
`);

/** Sends a message, as a reply when `replyToMessageId` is given. */
export const SendMessageMutation = graphql(`
  mutation SendMessage($id: ID!, $clientMsgId: String!, $text: String!, $replyToMessageId: ID) {
    sendMessage(input: { conversationId: $id, clientMsgId: $clientMsgId, text: $text, replyToMessageId: $replyToMessageId }) {
      message { ...MessageFields }
      deduplicated
    }
  }
`);

export const EditMessageMutation = graphql(`
  mutation EditMessage($id: ID!, $text: String!) {
    editMessage(input: { messageId: $id, text: $text }) {
      message { ...MessageFields }
    }
  }
`);

export const AddReactionMutation = graphql(`
  mutation AddReaction($id: ID!, $reaction: String!) {
    addReaction(input: { messageId: $id, reaction: $reaction }) {
      message { id reactions { reaction count reactedByMe } }
    }
  }
`);

export const RemoveReactionMutation = graphql(`
  mutation RemoveReaction($id: ID!, $reaction: String!) {
    removeReaction(input: { messageId: $id, reaction: $reaction }) {
      message { id reactions { reaction count reactedByMe } }
    }
  }
`);

/**
 * A thread: its root and a page of its replies. The newest page (`last`), an
 * older one (`before`) or what follows (`first`, `after`); Message.replies is
 * merged by relayStylePagination, like Conversation.messages.
 */
export const ThreadQuery = graphql(`
  query Thread($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    message(id: $id) {
      ...MessageFields
      replies(first: $first, after: $after, last: $last, before: $before) {
        edges { cursor node { ...MessageFields } }
        pageInfo { ...PageInfoFields }
      }
    }
  }
`);

export const MarkThreadReadMutation = graphql(`
  mutation MarkThreadRead($id: ID!, $seq: Seq!) {
    markThreadRead(input: { messageId: $id, seq: $seq }) {
      message { id threadUnreadCount }
    }
  }
`);

export const SearchQuery = graphql(`
  query Search($query: String!, $after: String) {
    search(query: $query, first: 20, after: $after) {
      edges {
        cursor
        node { id seq createdAt sender { id } conversation { id kind title } }
        snippet { text highlights { start end } }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
`);
