-- Rate-limit counters and socket leases are checked on every mutation and
-- socket: as unlogged tables their writes skip the WAL, so a send does not
-- wait for a second WAL flush. They hold nothing worth keeping across a
-- crash (PostgreSQL empties unlogged tables after one: limits start afresh,
-- leases of the dead processes vanish).
ALTER TABLE "rate_limits" SET UNLOGGED;--> statement-breakpoint
ALTER TABLE "socket_leases" SET UNLOGGED;
