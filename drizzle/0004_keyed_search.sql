-- Search lexemes move behind their conversation's key (src/history/searchText.ts,
-- conversationSearchKey): '#<conv id>' 'graphql':1 becomes '<key>graphql':1.
-- Rewritten here rather than by `backscroll reindex-search --all`, so no search
-- ever reads the old form. The index is dropped and rebuilt around the rewrite
-- (faster than updating it row by row).
DROP INDEX IF EXISTS "message_bodies_search_idx";--> statement-breakpoint
UPDATE "message_bodies" b SET "search_terms" = (
  SELECT coalesce(string_agg(
      '''' || encode(substring(decode(md5(b."conv_id"::text), 'hex') from 1 for 6), 'base64') || replace(replace(u.lexeme, '\', '\\'), '''', '''''') || ''''
        || coalesce(':' || array_to_string(u.positions, ','), ''),
      ' '), '')::tsvector
  FROM unnest(b."search_terms") u
  WHERE u.lexeme NOT LIKE '#%')
WHERE "search_terms" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "message_bodies_search_idx" ON "message_bodies" USING gin ("search_terms");
