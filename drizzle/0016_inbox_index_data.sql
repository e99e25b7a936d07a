-- The inbox index (user_inbox, src/store/inboxIndex.ts) for the data already
-- here: groups of more than 50 members (LARGE_GROUP_MEMBERS,
-- src/history/inboxFanout.ts) become large, and every membership gets its
-- row, with the conversation's last activity unless it is large.
UPDATE "conversations" c SET "large" = true
WHERE (SELECT count(*) FROM "members" mb WHERE mb."conv_id" = c."id") > 50;--> statement-breakpoint
INSERT INTO "user_inbox" ("user_id", "conv_id", "activity_at")
SELECT mb."user_id", mb."conv_id", CASE WHEN c."large" THEN NULL ELSE c."last_activity_at" END
FROM "members" mb JOIN "conversations" c ON c."id" = mb."conv_id"
ON CONFLICT DO NOTHING;
