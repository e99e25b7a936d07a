/**
 * The operations Apollo Sandbox opens with in development: a first walk
 * through the API. With the demo, `$conversationId` and `$messageId` are
 * preloaded (the demo group and a message in its middle); without it, run
 * CreateGroup and Send first and paste the ids.
 */
export const SANDBOX_DOCUMENT = `# Start here: the newest page, then older pages, a jump, a search, a send.
query NewestPage($conversationId: ID!) {
  conversation(id: $conversationId) {
    title
    maxSeq
    messages(last: 20) {
      edges { cursor node { id seq sender { id } createdAt content { __typename ... on TextContent { text } ... on RevokedContent { revokedAt } } } }
      pageInfo { hasPreviousPage hasNextPage startCursor endCursor }
      latestSeq
    }
  }
}

# Paste NewestPage's pageInfo.startCursor as $before; repeat with each page's startCursor.
query OlderPage($conversationId: ID!, $before: String) {
  conversation(id: $conversationId) {
    messages(last: 20, before: $before) {
      edges { cursor node { seq sender { id } content { __typename ... on TextContent { text } ... on RevokedContent { revokedAt } } } }
      pageInfo { hasPreviousPage startCursor }
    }
  }
}

# A permalink or a search hit: the page around one message.
query Jump($conversationId: ID!, $messageId: ID!) {
  conversation(id: $conversationId) {
    messagesAround(messageId: $messageId, before: 10, after: 10) {
      anchorFound
      edges { cursor node { id seq sender { id } content { __typename ... on TextContent { text } } } }
      pageInfo { hasPreviousPage hasNextPage startCursor endCursor }
    }
  }
}

query Search {
  search(query: "爬山", first: 10) {
    edges { node { id seq conversation { id } } snippet { text highlights { start end } } }
    pageInfo { hasNextPage endCursor }
  }
}

mutation Send($conversationId: ID!) {
  sendMessage(input: { conversationId: $conversationId, clientMsgId: "hello-1", text: "Hello, 世界" }) {
    deduplicated
    message { id seq createdAt content { ... on TextContent { text } } }
  }
}

mutation CreateGroup {
  createConversation(input: { title: "First steps", memberIds: ["bob"] }) {
    conversation { id title }
  }
}
`;
