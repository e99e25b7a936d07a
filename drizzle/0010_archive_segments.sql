CREATE TABLE "archive_segments" (
	"conv_id" uuid NOT NULL,
	"from_seq" bigint NOT NULL,
	"to_seq" bigint NOT NULL,
	"key" text NOT NULL,
	"bytes" integer NOT NULL,
	"checksum" text NOT NULL,
	"count" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "archive_segments_conv_id_from_seq_pk" PRIMARY KEY("conv_id","from_seq"),
	CONSTRAINT "archive_segments_range_check" CHECK ("archive_segments"."from_seq" <= "archive_segments"."to_seq" and "archive_segments"."count" between 1 and "archive_segments"."to_seq" - "archive_segments"."from_seq" + 1)
);
