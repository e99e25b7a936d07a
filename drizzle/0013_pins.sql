CREATE TABLE "message_pins" (
	"conv_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"pinned_by" text NOT NULL,
	"pinned_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "message_pins_conv_id_seq_pk" PRIMARY KEY("conv_id","seq")
);
--> statement-breakpoint
ALTER TABLE "conversation_changes" DROP CONSTRAINT "conversation_changes_kind_check";--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "members_may_pin" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "message_pins_order_idx" ON "message_pins" USING btree ("conv_id","pinned_at","seq");--> statement-breakpoint
ALTER TABLE "conversation_changes" ADD CONSTRAINT "conversation_changes_kind_check" CHECK ("conversation_changes"."kind" in ('revoked', 'purged', 'hidden', 'history_cleared', 'retention_changed', 'erased', 'edited', 'reactions_changed', 'thread_read', 'starred', 'unstarred', 'pinned', 'unpinned'));