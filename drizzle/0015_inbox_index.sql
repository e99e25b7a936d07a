CREATE TABLE "user_inbox" (
	"user_id" text NOT NULL,
	"conv_id" uuid NOT NULL,
	"activity_at" timestamp with time zone,
	CONSTRAINT "user_inbox_user_id_conv_id_pk" PRIMARY KEY("user_id","conv_id")
);
--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "large" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "user_inbox_order_idx" ON "user_inbox" USING btree ("user_id","activity_at","conv_id") WHERE "user_inbox"."activity_at" is not null;--> statement-breakpoint
CREATE INDEX "user_inbox_read_time_idx" ON "user_inbox" USING btree ("user_id","conv_id") WHERE "user_inbox"."activity_at" is null;