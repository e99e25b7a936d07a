CREATE TABLE "rate_limits" (
	"key" text PRIMARY KEY NOT NULL,
	"points" integer NOT NULL,
	"expire" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "socket_leases" (
	"socket_id" uuid PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"server_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "socket_leases_user" ON "socket_leases" USING btree ("user_id","expires_at");--> statement-breakpoint
CREATE INDEX "socket_leases_server" ON "socket_leases" USING btree ("server_id");