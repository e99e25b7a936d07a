/**
 * Turning ids from arguments into things the viewer may read. Every path
 * answers `NOT_FOUND` the same way for "no such thing" and "not yours", and
 * for ids that are malformed or of another type.
 */
import { conversationGlobalId, decodeConversationId, decodeMessageId } from '../../history/globalId.ts';
import type { MessageKey } from '../../store/messages.ts';
import type { ConversationRow, MessageRow } from '../../store/rows.ts';
import { echo, notFound } from '../errors.ts';
import type { Loaders } from '../loaders.ts';
import type { ConversationModel } from '../models.ts';

/** The one answer for a conversation the viewer cannot read, whatever the reason. */
export function conversationNotFound(id: string) {
  return notFound(`No conversation with id ${echo(id)} that you are a member of.`);
}

/** The one answer for a message the viewer cannot read, whatever the reason. */
export function messageNotFound(id: string, consequence = '') {
  return notFound(`No message with id ${echo(id)} that you can read${consequence}.`);
}

/** The conversation named by a conversation id, if the viewer is a member; else `NOT_FOUND`. */
export async function readableConversation(loaders: Loaders, id: string): Promise<ConversationRow> {
  const convId = decodeConversationId(id);
  const row = convId === null ? null : await loaders.conversation.load(convId);
  if (row === null) throw conversationNotFound(id);
  return row;
}

/** The row behind a conversation model, checking membership if it was not checked yet. */
export async function conversationRow(loaders: Loaders, model: ConversationModel): Promise<ConversationRow> {
  if (!('unchecked' in model)) return model;
  const row = await loaders.conversation.load(model.id);
  if (row === null) throw conversationNotFound(conversationGlobalId(model.id));
  return row;
}

/** The key inside a message id, or `NOT_FOUND` when `id` is not a message id. */
export function messageKeyOf(id: string): MessageKey {
  const key = decodeMessageId(id);
  if (key === null) throw messageNotFound(id);
  return key;
}

/** The message named by `id` as the viewer sees it; `NOT_FOUND` when they cannot see it. */
export async function readableMessage(loaders: Loaders, id: string): Promise<MessageRow> {
  const row = await loaders.message.load(messageKeyOf(id));
  if (row === null) throw messageNotFound(id);
  return row;
}

/** Reloads a conversation after a write in this request changed it. */
export async function freshConversation(loaders: Loaders, convId: string): Promise<ConversationRow> {
  loaders.conversation.clear(convId);
  return conversationRow(loaders, { id: convId, unchecked: true });
}
