/** Every resolver, by type. */
import { DateTimeScalar, SeqScalar } from '../scalars.ts';
import type { Resolvers } from '../generated/resolvers.ts';
import { ChangeConnection, MessageChange } from './changes.ts';
import { MessageConnection } from './connection.ts';
import { Conversation } from './conversation.ts';
import { conversationInboxFields } from './conversationInbox.ts';
import { Message, MessageContent, RevokedContent } from './message.ts';
import { editMutations, MessageEditConnection, messageEditFields } from './edits.ts';
import { messageReactionFields, ReactionGroup, reactionMutations, UserConnection } from './reactions.ts';
import { messageThreadFields, ThreadConnection, threadMutations } from './threads.ts';
import { messageStarFields, starMutations, StarredMessageConnection, StarredMessageEdge, viewerStarFields } from './stars.ts';
import { conversationPinFields, PinnedMessageConnection, PinnedMessageEdge, pinMutations } from './pins.ts';
import { conversationMentionFields, MentionConnection, MentionEdge, messageMentionFields, viewerMentionFields } from './mentions.ts';
import { Mutation } from './mutation.ts';
import { Node, Query } from './query.ts';
import { MessageSearchConnection, MessageSearchEdge, searchQuery } from './search.ts';
import { ConversationEvent, Subscription } from './subscription.ts';
import { ConversationConnection, Viewer } from './viewer.ts';
import { Announcement, AnnouncementConnection, announcementMutations, viewerAnnouncementFields } from './announcements.ts';
import { conversationMembershipFields, MemberConnection, membershipMutations } from './membership.ts';

export const resolvers: Resolvers = {
  DateTime: DateTimeScalar,
  Seq: SeqScalar,
  Query: { ...Query, ...searchQuery },
  Node,
  Mutation: { ...Mutation, ...membershipMutations, ...announcementMutations, ...editMutations, ...reactionMutations, ...threadMutations, ...starMutations, ...pinMutations },
  Conversation: { ...Conversation, ...conversationMembershipFields, ...conversationInboxFields, ...conversationPinFields, ...conversationMentionFields },
  PinnedMessageConnection,
  PinnedMessageEdge,
  Viewer: { ...Viewer, ...viewerAnnouncementFields, ...viewerStarFields, ...viewerMentionFields },
  MentionConnection,
  MentionEdge,
  StarredMessageConnection,
  StarredMessageEdge,
  ConversationConnection,
  MemberConnection,
  Announcement,
  AnnouncementConnection,
  MessageConnection,
  Message: { ...Message, ...messageEditFields, ...messageReactionFields, ...messageThreadFields, ...messageStarFields, ...messageMentionFields },
  MessageEditConnection,
  ThreadConnection,
  ReactionGroup,
  UserConnection,
  MessageContent,
  RevokedContent,
  ChangeConnection,
  MessageChange,
  MessageSearchConnection,
  MessageSearchEdge,
  Subscription,
  ConversationEvent,
};
