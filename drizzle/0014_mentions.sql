CREATE TABLE "message_mentions" (
	"conv_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"user_id" text NOT NULL,
	"position" integer NOT NULL,
	"sent_at" timestamp with time zone NOT NULL,
	CONSTRAINT "message_mentions_conv_id_seq_user_id_pk" PRIMARY KEY("conv_id","seq","user_id")
);
--> statement-breakpoint
CREATE INDEX "message_mentions_user_time_idx" ON "message_mentions" USING btree ("user_id","sent_at","conv_id","seq");--> statement-breakpoint
CREATE INDEX "message_mentions_user_conv_idx" ON "message_mentions" USING btree ("user_id","conv_id","seq");