ALTER TABLE "message_bodies" ADD COLUMN "search_terms" "tsvector";--> statement-breakpoint
CREATE INDEX "message_bodies_search_idx" ON "message_bodies" USING gin ("search_terms");