CREATE TABLE "message_edits" (
	"conv_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"version" integer NOT NULL,
	"text" text NOT NULL,
	"edited_at" timestamp with time zone NOT NULL,
	CONSTRAINT "message_edits_conv_id_seq_version_pk" PRIMARY KEY("conv_id","seq","version")
);
--> statement-breakpoint
CREATE TABLE "message_reactions" (
	"conv_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"reaction" text NOT NULL,
	"user_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "message_reactions_conv_id_seq_reaction_user_id_pk" PRIMARY KEY("conv_id","seq","reaction","user_id")
);
--> statement-breakpoint
CREATE TABLE "thread_reads" (
	"conv_id" uuid NOT NULL,
	"root_seq" bigint NOT NULL,
	"user_id" text NOT NULL,
	"read_seq" bigint NOT NULL,
	CONSTRAINT "thread_reads_conv_id_root_seq_user_id_pk" PRIMARY KEY("conv_id","root_seq","user_id")
);
--> statement-breakpoint
ALTER TABLE "conversation_changes" DROP CONSTRAINT "conversation_changes_kind_check";--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "edited_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "reply_to_seq" bigint;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "thread_root_seq" bigint;--> statement-breakpoint
CREATE INDEX "message_reactions_user_idx" ON "message_reactions" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "messages_thread_idx" ON "messages" USING btree ("conv_id","thread_root_seq","seq") WHERE "messages"."thread_root_seq" is not null;--> statement-breakpoint
ALTER TABLE "conversation_changes" ADD CONSTRAINT "conversation_changes_kind_check" CHECK ("conversation_changes"."kind" in ('revoked', 'purged', 'hidden', 'history_cleared', 'retention_changed', 'erased', 'edited', 'reactions_changed', 'thread_read'));