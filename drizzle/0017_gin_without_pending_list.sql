-- Written by hand: drizzle-kit drops and rebuilds the index to change a storage parameter, a rebuild of every vector; ALTER INDEX changes it at once.
ALTER INDEX "message_bodies_search_idx" SET (fastupdate = off);--> statement-breakpoint
-- Turning fastupdate off stops new entries going to the pending list; this moves the ones already there into the index.
SELECT gin_clean_pending_list('message_bodies_search_idx');
