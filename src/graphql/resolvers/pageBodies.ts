/**
 * A page's bodies. The page statement brought the warm ones: they go into
 * the body loader, so `Message.content` takes them from there and a page of
 * warm messages is one statement. A page that reaches into the archive reads
 * the rest before it answers, through the same loader, so it can leave out
 * what could not be read instead of failing whole or showing a placeholder:
 * the page is cut where the first unreadable message lies, going outward
 * from the side it was asked from (src/history/pageCut.ts).
 */
import { responsePathAsArray, type GraphQLResolveInfo } from 'graphql';
import type { ArchiveUnavailableError } from '../../archive/reader.ts';
import { cutAtUnreadable, type KeptEnd } from '../../history/pageCut.ts';
import type { PageSlice } from '../../history/pageSlice.ts';
import type { MessageRow } from '../../store/rows.ts';
import { viewerOf, type RequestContext } from '../context.ts';
import { archiveUnavailable } from '../errors.ts';
import { primeWarmText } from '../warmTexts.ts';
import type { ConnectionModel } from '../models.ts';

/** A scanned page before its archived bodies are read. */
interface ScannedSlice {
  slice: PageSlice<MessageRow>;
  /** The warm bodies the page statement joined, by seq. */
  warmTexts: ReadonlyMap<number, string>;
  /** The highest seq whose body may be archived (the page statement's `archivedThroughSeq`). */
  archivedThroughSeq: number;
  keep: KeptEnd;
}

/**
 * `page` with its warm bodies handed to the body loader and what could not
 * be read from the archive left out, and the cut (null when nothing was).
 * An unreadable segment (anything but a timeout) also adds an
 * `ARCHIVE_UNAVAILABLE` error at `info`'s path.
 */
export async function readPageBodies(
  context: RequestContext,
  info: GraphQLResolveInfo,
  page: ScannedSlice,
): Promise<{ slice: PageSlice<MessageRow>; cut: ConnectionModel['cut'] }> {
  const { slice, warmTexts, archivedThroughSeq, keep } = page;
  const loader = viewerOf(context).loaders.body;
  const shown = slice.rows.filter((row) => row.revokedAt === null);
  for (const row of shown) {
    const text = warmTexts.get(row.seq);
    if (text !== undefined) primeWarmText(viewerOf(context).loaders, row, text);
  }
  const cold = shown.filter((row) => !warmTexts.has(row.seq) && row.seq <= archivedThroughSeq);
  if (cold.length === 0) return { slice, cut: null };
  const bodies = await loader.loadMany(cold.map((row) => ({ convId: row.convId, seq: row.seq })));
  const unreadable = new Map<number, ArchiveUnavailableError>();
  bodies.forEach((body, index) => {
    if (body instanceof Error) throw body;
    if (body.kind === 'unavailable') unreadable.set(cold[index]!.seq, body.error);
  });
  if (unreadable.size === 0) return { slice, cut: null };
  const cut = cutAtUnreadable(slice, keep, (row) => !unreadable.has(row.seq));
  if (cut.cut === null) return { slice, cut: null };
  const problems = [...unreadable.values()];
  const broken = problems.find((error) => error.problem !== 'timeout');
  if (broken !== undefined) {
    context.partialErrors.push(archiveUnavailable(broken.problem, responsePathAsArray(info.path)));
  }
  return { slice: cut.slice, cut: { at: cut.cut, reason: broken === undefined ? 'ARCHIVE_TIMEOUT' : 'ARCHIVE_UNAVAILABLE' } };
}
