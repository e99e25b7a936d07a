CREATE TABLE "message_stars" (
	"conv_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"user_id" text NOT NULL,
	"starred_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "message_stars_conv_id_seq_user_id_pk" PRIMARY KEY("conv_id","seq","user_id")
);
--> statement-breakpoint
ALTER TABLE "conversation_changes" DROP CONSTRAINT "conversation_changes_kind_check";--> statement-breakpoint
CREATE INDEX "message_stars_user_idx" ON "message_stars" USING btree ("user_id","starred_at","conv_id","seq");--> statement-breakpoint
ALTER TABLE "conversation_changes" ADD CONSTRAINT "conversation_changes_kind_check" CHECK ("conversation_changes"."kind" in ('revoked', 'purged', 'hidden', 'history_cleared', 'retention_changed', 'erased', 'edited', 'reactions_changed', 'thread_read', 'starred', 'unstarred'));