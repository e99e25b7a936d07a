CREATE TABLE "conversations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"title" text,
	"max_seq" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_activity_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "conversations_kind_check" CHECK ("conversations"."kind" in ('direct', 'group'))
);
--> statement-breakpoint
CREATE TABLE "members" (
	"conv_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"role" text DEFAULT 'member' NOT NULL,
	"joined_at" timestamp with time zone DEFAULT now() NOT NULL,
	"clear_seq" bigint DEFAULT 0 NOT NULL,
	"read_seq" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "members_conv_id_user_id_pk" PRIMARY KEY("conv_id","user_id"),
	CONSTRAINT "members_role_check" CHECK ("members"."role" in ('owner', 'member'))
);
--> statement-breakpoint
CREATE TABLE "message_bodies" (
	"conv_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"text" text NOT NULL,
	CONSTRAINT "message_bodies_conv_id_seq_pk" PRIMARY KEY("conv_id","seq")
);
--> statement-breakpoint
CREATE TABLE "message_hides" (
	"conv_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"hidden_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "message_hides_conv_id_user_id_seq_pk" PRIMARY KEY("conv_id","user_id","seq")
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"conv_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"sender_id" text NOT NULL,
	"kind" text DEFAULT 'text' NOT NULL,
	"client_msg_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	"revoked_by" text,
	CONSTRAINT "messages_conv_id_seq_pk" PRIMARY KEY("conv_id","seq")
);
--> statement-breakpoint
CREATE INDEX "members_user_idx" ON "members" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_client_msg_id_idx" ON "messages" USING btree ("conv_id","sender_id","client_msg_id");