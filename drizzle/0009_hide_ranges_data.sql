-- "Deleted for me" moves from a row per message (message_hides) to ranges
-- (message_hide_ranges, src/store/hides.ts): a member's hidden seqs with no
-- message between them (none at all, or only purged ones) become one range,
-- as hides merge from now on. message_hides is left empty: only the purge of
-- src/store/lifecycle.ts still names it.
INSERT INTO "message_hide_ranges" ("conv_id", "user_id", "from_seq", "to_seq")
SELECT r."conv_id", r."user_id", min(r."seq"), max(r."seq")
FROM (
  SELECT s."conv_id", s."user_id", s."seq",
    sum(CASE WHEN s."starts" THEN 1 ELSE 0 END) OVER (PARTITION BY s."conv_id", s."user_id" ORDER BY s."seq") AS "run"
  FROM (
    SELECT p."conv_id", p."user_id", p."seq",
      -- A new range starts where a message lies between this hide and the one before.
      p."before" IS NULL OR coalesce((
        SELECT m."seq" FROM "messages" m WHERE m."conv_id" = p."conv_id" AND m."seq" > p."before" ORDER BY m."seq" LIMIT 1
      ) < p."seq", false) AS "starts"
    FROM (
      SELECT h."conv_id", h."user_id", h."seq",
        lag(h."seq") OVER (PARTITION BY h."conv_id", h."user_id" ORDER BY h."seq") AS "before"
      FROM "message_hides" h
    ) p
  ) s
) r
GROUP BY r."conv_id", r."user_id", r."run";--> statement-breakpoint
DELETE FROM "message_hides";
