/** Every resolver, by type. */
import { DateTimeScalar, SeqScalar } from '../scalars.ts';
import type { Resolvers } from '../generated/resolvers.ts';
import { ChangeConnection, MessageChange } from './changes.ts';
import { MessageConnection, MessageEdge } from './connection.ts';
import { Conversation } from './conversation.ts';
import { Message, MessageContent, RevokedContent } from './message.ts';
import { Mutation } from './mutation.ts';
import { Node, Query } from './query.ts';

export const resolvers: Resolvers = {
  DateTime: DateTimeScalar,
  Seq: SeqScalar,
  Query,
  Node,
  Mutation,
  Conversation,
  MessageConnection,
  MessageEdge,
  Message,
  MessageContent,
  RevokedContent,
  ChangeConnection,
  MessageChange,
};
