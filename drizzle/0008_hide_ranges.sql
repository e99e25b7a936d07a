CREATE TABLE "message_hide_ranges" (
	"conv_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"from_seq" bigint NOT NULL,
	"to_seq" bigint NOT NULL,
	CONSTRAINT "message_hide_ranges_conv_id_user_id_from_seq_pk" PRIMARY KEY("conv_id","user_id","from_seq"),
	CONSTRAINT "message_hide_ranges_order_check" CHECK ("message_hide_ranges"."from_seq" <= "message_hide_ranges"."to_seq")
);
