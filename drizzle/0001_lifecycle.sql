CREATE TABLE "conversation_changes" (
	"conv_id" uuid NOT NULL,
	"change_seq" bigint NOT NULL,
	"kind" text NOT NULL,
	"from_seq" bigint NOT NULL,
	"to_seq" bigint NOT NULL,
	"user_id" text,
	"subject_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "conversation_changes_conv_id_change_seq_pk" PRIMARY KEY("conv_id","change_seq"),
	CONSTRAINT "conversation_changes_kind_check" CHECK ("conversation_changes"."kind" in ('revoked', 'purged', 'hidden', 'history_cleared', 'retention_changed', 'erased'))
);
--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "retention_days" integer;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "retention_max_messages" integer;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "change_seq" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "changes_pruned_through" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "erased_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "conversation_changes_created_idx" ON "conversation_changes" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "messages_created_idx" ON "messages" USING btree ("conv_id","created_at","seq");