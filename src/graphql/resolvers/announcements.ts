/** Announcements: the viewer's list and unread count, publishing (admins), and marking them read. */
import { announcementGlobalId } from '../../history/globalId.ts';
import { decodeAnnouncementCursor, encodeAnnouncementCursor } from '../../history/listCursors.ts';
import { textProblem } from '../../history/messageText.ts';
import {
  type AnnouncementRow,
  countUnreadAnnouncements,
  listAnnouncements,
  markAnnouncementsRead,
  publishAnnouncement,
} from '../../store/announcements.ts';
import { cutExtraRow } from '../../history/pageSlice.ts';
import { viewerOf } from '../context.ts';
import { badUserInput, echo, forbidden } from '../errors.ts';
import type {
  AnnouncementConnectionResolvers,
  AnnouncementEdgeResolvers,
  AnnouncementResolvers,
  MutationResolvers,
  ViewerResolvers,
} from '../generated/resolvers.ts';
import type { KeysetPage } from '../models.ts';
import { checkedTitle } from './arguments.ts';
import { keysetConnectionResolvers, keysetSize } from './keyset.ts';


export const viewerAnnouncementFields: Pick<ViewerResolvers, 'announcements' | 'unreadAnnouncementCount'> = {
  announcements: async (_viewer, args, context) => {
    const { viewerId } = viewerOf(context);
    const first = keysetSize('announcements', args.first);
    let beforeId: number | null = null;
    if (args.after !== null && args.after !== undefined) {
      beforeId = decodeAnnouncementCursor(args.after);
      if (beforeId === null) throw badUserInput(`Argument \`after\` is not an announcements cursor: got ${echo(args.after)}.`, 'after');
    }
    const rows = await listAnnouncements(context.db, viewerId, beforeId, first);
    const { rows: kept, more } = cutExtraRow(rows, first);
    const page: KeysetPage<AnnouncementRow> = {
      rows: kept,
      hasNextPage: more,
      hasPreviousPage: beforeId !== null,
      cursorOf: (row) => encodeAnnouncementCursor(row.id),
    };
    return page;
  },
  unreadAnnouncementCount: (_viewer, _args, context) => countUnreadAnnouncements(context.db, viewerOf(context).viewerId),
};

export const AnnouncementConnection: AnnouncementConnectionResolvers = keysetConnectionResolvers<AnnouncementRow>();

export const Announcement: AnnouncementResolvers = {
  id: (announcement) => announcementGlobalId(announcement.id),
};

export const announcementMutations: Pick<MutationResolvers, 'publishAnnouncement' | 'markAnnouncementsRead'> = {
  publishAnnouncement: async (_root, { input }, context) => {
    const { viewerId, admin } = viewerOf(context);
    if (!admin) throw forbidden('Publishing an announcement needs the `admin` role in your token.');
    const title = checkedTitle('title', input.title);
    const problem = textProblem(input.text);
    if (problem !== null) throw badUserInput(problem, 'text');
    return { announcement: await publishAnnouncement(context.db, viewerId, title, input.text) };
  },
  markAnnouncementsRead: async (_root, _args, context) => ({
    readUpTo: await markAnnouncementsRead(context.db, viewerOf(context).viewerId),
  }),
};
