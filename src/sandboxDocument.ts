/** The operations Apollo Sandbox opens with in development: a first walk through the API. */
export const SANDBOX_DOCUMENT = `# Start here: create a group, send to it, then page through it.
mutation CreateGroup {
  createConversation(input: { title: "First steps", memberIds: ["bob"] }) {
    conversation { id title }
  }
}

mutation Send($conversationId: ID!) {
  sendMessage(input: { conversationId: $conversationId, clientMsgId: "hello-1", text: "Hello, 世界" }) {
    deduplicated
    message { id seq createdAt content { ... on TextContent { text } } }
  }
}

query NewestPage($conversationId: ID!) {
  conversation(id: $conversationId) {
    title
    maxSeq
    messages(last: 20) {
      edges { cursor node { seq sender { id } content { __typename ... on TextContent { text } } } }
      pageInfo { hasPreviousPage hasNextPage startCursor endCursor }
      latestSeq
    }
  }
}
`;
