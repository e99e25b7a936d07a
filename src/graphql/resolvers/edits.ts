/** Edits: `editMessage`, `Message.editedAt` and `Message.edits`. */
import { decodeEditCursor, encodeEditCursor } from '../../history/listCursors.ts';
import { textProblem } from '../../history/messageText.ts';
import { cutExtraRow } from '../../history/pageSlice.ts';
import { editMessage } from '../../store/edits.ts';
import { viewerOf } from '../context.ts';
import { badUserInput, echo, forbidden } from '../errors.ts';
import type { MessageEditConnectionResolvers, MessageResolvers, MutationResolvers } from '../generated/resolvers.ts';
import { keysetConnectionResolvers, keysetSize } from './keyset.ts';
import { messageKeyOf, messageNotFound } from './lookups.ts';

const WHY_NOT: Record<'not-sender' | 'revoked' | 'erased' | 'archived' | 'window-passed', (id: string, windowSeconds: number | null) => string> = {
  'not-sender': (id) => `Message ${id} can only be edited by its sender.`,
  revoked: (id) => `Message ${id} was revoked; it has no text to edit.`,
  erased: (id) => `Message ${id} was erased; it has no text to edit.`,
  archived: (id) => `Message ${id} is in the cold archive, whose segments are never rewritten for an edit.`,
  'window-passed': (id, windowSeconds) => `Message ${id} can no longer be edited: senders may edit within ${windowSeconds} seconds of sending.`,
};

export const editMutations: Pick<MutationResolvers, 'editMessage'> = {
  editMessage: async (_root, { input }, context) => {
    const { viewerId } = viewerOf(context);
    const key = messageKeyOf(input.messageId);
    const problem = textProblem(input.text);
    if (problem !== null) throw badUserInput(problem, 'text');
    const windowSeconds = context.config.editWindowSeconds;
    const outcome = await editMessage(context.db, context.publisher, viewerId, key, input.text, windowSeconds, context.retention);
    switch (outcome.kind) {
      case 'edited':
        // The text was just written: answer it without reading it back.
        viewerOf(context).loaders.body.prime(key, { kind: 'text', text: input.text });
        return { message: outcome.message };
      case 'unchanged':
        return { message: outcome.message };
      case 'not-found':
        throw messageNotFound(input.messageId);
      case 'forbidden':
        throw forbidden(WHY_NOT[outcome.reason](echo(input.messageId), windowSeconds), outcome.reason === 'archived' ? 'ARCHIVED' : undefined);
    }
  },
};

export const messageEditFields: Pick<MessageResolvers, 'editedAt' | 'edits'> = {
  editedAt: (message) => message.editedAt,
  edits: async (message, args, context) => {
    const first = keysetSize('edits', args.first);
    let beforeVersion: number | null = null;
    if (args.after !== null && args.after !== undefined) {
      beforeVersion = decodeEditCursor(message.convId, message.seq, args.after);
      if (beforeVersion === null) {
        throw badUserInput(`Argument \`after\` is not a cursor of this message's edits: got ${echo(args.after)}.`, 'after');
      }
    }
    // A revoked message has no versions left (revoking deleted them): no statement.
    const rows = message.revokedAt !== null ? [] : await viewerOf(context).loaders.edits.load({ convId: message.convId, seq: message.seq, beforeVersion, limit: first + 1 });
    const { rows: page, more } = cutExtraRow(rows, first);
    return {
      rows: page,
      hasNextPage: more,
      hasPreviousPage: beforeVersion !== null,
      cursorOf: (row) => encodeEditCursor(message.convId, message.seq, row.version),
    };
  },
};

export const MessageEditConnection: MessageEditConnectionResolvers = keysetConnectionResolvers();
