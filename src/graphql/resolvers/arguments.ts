/** Checks of id arguments that several resolvers share. */
import { decodeConversationId } from '../../history/globalId.ts';
import { codePointLength, isStorable } from '../../history/storableText.ts';
import { isValidUserId, MAX_USER_ID_LENGTH } from '../../history/userId.ts';
import { badUserInput, echo } from '../errors.ts';
import { conversationNotFound } from './lookups.ts';

/** How many users one call may name (group creation, adding members). */
export const MAX_MEMBERS = 1000;

/** The conversation uuid in an argument; `NOT_FOUND` for anything that is not a conversation id. */
export function conversationUuid(id: string): string {
  const convId = decodeConversationId(id);
  if (convId === null) throw conversationNotFound(id);
  return convId;
}

/** `BAD_USER_INPUT` naming `argumentName` unless `userId` is a valid user id. */
export function checkUserId(argumentName: string, userId: string): void {
  if (!isValidUserId(userId)) {
    throw badUserInput(
      `Argument \`${argumentName}\` must hold user ids of 1 to ${MAX_USER_ID_LENGTH} printable characters, got ${echo(userId)}.`,
      argumentName,
    );
  }
}

const MAX_TITLE = 200;

/** A title argument trimmed, or `BAD_USER_INPUT` unless it is 1 to 200 storable characters after trimming. */
export function checkedTitle(argumentName: string, raw: string): string {
  const title = raw.trim();
  if (title.length === 0 || codePointLength(title, MAX_TITLE) > MAX_TITLE || !isStorable(title)) {
    throw badUserInput(`Argument \`${argumentName}\` must be 1 to ${MAX_TITLE} characters after trimming, got ${echo(raw)}.`, argumentName);
  }
  return title;
}
