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
    starredByMe
    mentions { id }
    mentionsEveryone
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
            unreadMentionCount
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

/**
 * A conversation's history, opened at your first unread message
 * (`aroundFirstUnread`, the newest page when all is read) or at a permalink's
 * message (`around`); with a cursor (and the opening variables left as they
 * were) the pages on from it, in either direction, which
 * relayStylePagination(['around', 'aroundFirstUnread']) merges into that
 * opening's own list. `firstUnreadSeq` and `anchorFound` are set on the
 * opening page only.
 */
export const ConversationPageQuery = graphql(`
  query ConversationPage($id: ID!, $around: ID, $aroundFirstUnread: Boolean, $first: Int, $last: Int, $after: String, $before: String) {
    conversation(id: $id) {
      id
      kind
      title
      messages(around: $around, aroundFirstUnread: $aroundFirstUnread, first: $first, last: $last, after: $after, before: $before) {
        edges { cursor node { ...MessageFields } }
        pageInfo { ...PageInfoFields }
        latestSeq
        anchorFound
        firstUnreadSeq
      }
    }
  }
`);

/**
 * Every pin of a conversation (at most 50 exist at once, so one page holds
 * them all). Its `content` is selected exactly as MessageFields selects it:
 * `content` is replaced whole in the cache, and a shown message must never
 * be left with fewer fields.
 */
const PinnedFields = graphql(`
  fragment PinnedFields on Conversation {
    pinnedMessages(first: 50) {
      edges {
        cursor
        pinnedAt
        pinnedBy { id }
        node {
          id
          seq
          sender { id }
          content {
            ... on TextContent { text }
            ... on RevokedContent { revokedAt revokedBy { id } }
            ... on PurgedContent { purgedAt }
          }
        }
      }
    }
  }
`);

/** What the conversation view needs besides its history: the members (for the composer's `@` mentions) and the pins. */
export const ConversationDetailsQuery = graphql(`
  query ConversationDetails($id: ID!) {
    conversation(id: $id) {
      id
      members(first: 100) { edges { node { user { id } } } }
      ...PinnedFields
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
      conversation { id readSeq unreadCount unreadCountCapped unreadMentionCount }
    }
  }
`);

/** "Mark unread from here": the read position moves back to just below the message; the inbox's counts follow from the answer. */
export const MarkUnreadMutation = graphql(`
  mutation MarkUnread($id: ID!) {
    markUnread(input: { messageId: $id }) {
      conversation { id readSeq unreadCount unreadCountCapped unreadMentionCount }
    }
  }
`);

/** Sends a message, as a reply when `replyToMessageId` is given, naming `mentionUserIds` and perhaps everyone. */
export const SendMessageMutation = graphql(`
  mutation SendMessage($id: ID!, $clientMsgId: String!, $text: String!, $replyToMessageId: ID, $mentionUserIds: [ID!], $mentionEveryone: Boolean) {
    sendMessage(
      input: {
        conversationId: $id
        clientMsgId: $clientMsgId
        text: $text
        replyToMessageId: $replyToMessageId
        mentionUserIds: $mentionUserIds
        mentionEveryone: $mentionEveryone
      }
    ) {
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

/** Stars and unstars answer the message's `starredByMe`, which the cache puts wherever it is shown. */
export const StarMessageMutation = graphql(`
  mutation StarMessage($id: ID!) {
    starMessage(input: { messageId: $id }) { message { id starredByMe } }
  }
`);

export const UnstarMessageMutation = graphql(`
  mutation UnstarMessage($id: ID!) {
    unstarMessage(input: { messageId: $id }) { message { id starredByMe } }
  }
`);

/** Pins and unpins answer the conversation's pins, which replace the cached ones (the pins strip and the Pin buttons follow). */
export const PinMessageMutation = graphql(`
  mutation PinMessage($id: ID!) {
    pinMessage(input: { messageId: $id }) { message { id } conversation { id ...PinnedFields } }
  }
`);

export const UnpinMessageMutation = graphql(`
  mutation UnpinMessage($id: ID!) {
    unpinMessage(input: { messageId: $id }) { message { id } conversation { id ...PinnedFields } }
  }
`);

/** A message in the Starred and Mentions lists: enough to show it and jump into its conversation at it. */
const ListedMessageFields = graphql(`
  fragment ListedMessageFields on Message {
    id
    seq
    createdAt
    sender { id }
    conversation { id kind title }
    content {
      ... on TextContent { text }
      ... on RevokedContent { revokedAt revokedBy { id } }
      ... on PurgedContent { purgedAt }
    }
  }
`);

/** Your starred messages, most recently starred first; `Viewer.starredMessages` is merged by relayStylePagination. */
export const StarredMessagesQuery = graphql(`
  query StarredMessages($after: String) {
    viewer {
      id
      starredMessages(first: 20, after: $after) {
        edges { cursor starredAt node { ...ListedMessageFields } }
        pageInfo { ...PageInfoFields }
      }
    }
  }
`);

/** The messages that mention you, newest first; `Viewer.mentions` is merged by relayStylePagination. */
export const MentionsQuery = graphql(`
  query Mentions($after: String) {
    viewer {
      id
      mentions(first: 20, after: $after) {
        edges { cursor everyone node { ...ListedMessageFields } }
        pageInfo { ...PageInfoFields }
      }
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
