/**
 * How many items each paged field of the schema can answer, by its schema
 * coordinate, from its arguments as the executor will see them (variables
 * coerced, declared defaults applied). Sizes come from the one table in
 * src/history/listSizes.ts that the resolvers read too. A field missing here
 * answers one object (or a list bounded by its parent page, like `gaps`).
 */
import { isGiven, mostItems } from '../../history/listSizes.ts';
import { MAX_REACTIONS_PER_MESSAGE } from '../../history/reaction.ts';

type Args = Record<string, unknown>;
const given = (value: unknown) => isGiven(value as number | null | undefined);

/** Items answered by each paged field, by `Type.field`. */
export const LIST_FIELDS: Readonly<Record<string, (args: Args) => number>> = {
  'Conversation.messages': (args) => {
    // A jump (`around` or `aroundFirstUnread` without a cursor): both sides and the anchor; a left-out side is 0 when the other is given.
    if ((given(args.around) || args.aroundFirstUnread === true) && !given(args.after) && !given(args.before)) {
      const neither = !given(args.first) && !given(args.last);
      const side = (value: unknown) => (given(value) ? mostItems('jumpSide', value) : neither ? mostItems('jumpSide', undefined) : 0);
      return side(args.last) + side(args.first) + 1;
    }
    return mostItems('messages', given(args.first) ? args.first : args.last);
  },
  'Conversation.messagesAround': (args) => mostItems('aroundSide', args.before) + mostItems('aroundSide', args.after) + 1,
  'Conversation.messagesAt': (args) => mostItems('aroundSide', args.before) + mostItems('aroundSide', args.after) + 1,
  'Conversation.members': (args) => mostItems('members', args.first),
  'Conversation.changes': (args) => mostItems('changes', args.first),
  'Query.search': (args) => mostItems('search', args.first),
  'Viewer.conversations': (args) => mostItems('conversations', args.first),
  'Viewer.announcements': (args) => mostItems('announcements', args.first),
  'Message.replies': (args) => mostItems('replies', given(args.first) ? args.first : args.last),
  'Message.edits': (args) => mostItems('edits', args.first),
  'Message.reactions': () => MAX_REACTIONS_PER_MESSAGE,
  'ReactionGroup.users': (args) => mostItems('reactors', args.first),
  'Viewer.starredMessages': (args) => mostItems('starred', args.first),
  'Viewer.mentions': (args) => mostItems('mentions', args.first),
  'Conversation.pinnedMessages': (args) => mostItems('pins', args.first),
};
