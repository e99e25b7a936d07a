CREATE TABLE "announcement_reads" (
	"user_id" text PRIMARY KEY NOT NULL,
	"read_up_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "announcements" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"title" text NOT NULL,
	"text" text NOT NULL,
	"published_by" text NOT NULL,
	"published_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "history_visibility" text DEFAULT 'shared' NOT NULL;--> statement-breakpoint
ALTER TABLE "members" ADD COLUMN "joined_seq" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_history_visibility_check" CHECK ("conversations"."history_visibility" in ('shared', 'since_joined'));