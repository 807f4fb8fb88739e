/*-------------------------------------------------------------------------
 *
 * purge.c
 *	  Retention: okno_purge(keys_older_than, delivered_older_than).
 *
 * Deletes idempotency rows created more than keys_older_than ago and
 * delivered events delivered more than delivered_older_than ago, in the
 * caller's transaction.  Pending and parked events are never deleted
 * (their delivered_at is NULL).  A key purged is forgotten: a retry with it
 * afterwards is a new request.
 *
 * The work is done in bounded batches (purge_walk.c): each step walks the
 * next 10,000 rows of a table in primary-key order (a keyset cursor,
 * so every row is visited once whatever was deleted before it) and deletes
 * the old ones among them with one statement.  No statement touches more
 * than a batch of rows, no index beyond the primary keys is needed, and
 * only row locks on the deleted rows are taken: creates, replays and drains
 * go on meanwhile.  CHECK_FOR_INTERRUPTS between batches lets a purge be
 * cancelled.
 *
 * From okno 0.3.0 on, the purge also records its cutoffs in
 * okno_purge_horizon (never moving them back), so that okno_verify knows
 * which bookings may have lost their key or event on purpose.
 *
 * From okno 0.7.0 on, each key deleted (a booking's, or an operation's of
 * okno_key) leaves a tombstone in okno_key_tombstone, the hash of its
 * identity and when it expired (keys/tombstone.c), so that a retry with it
 * is answered key_expired rather than run again; the tombstones older than
 * okno.key_tombstone_age are deleted first (all of them, and none is left,
 * when it is 0).  A database with none of the application's five tables
 * (one that uses only operations' keys) has only okno's own tables purged.
 *
 * From okno 0.5.0 on, an event is deleted only when every subscriber is done
 * with it as well: each has copied it (its snapshot sees the event's
 * transaction finished, taken in this cluster) and none has it undelivered
 * in okno_delivery; the subscribers' rows of okno_delivery go with it.  The
 * default subscriber's delivered_at still dates it.
 *
 * From okno 0.8.0 on, where Citus has a table of keys or the tombstones, a
 * key is forgotten in two purges (purge_cluster.c): the first leaves a
 * pending tombstone, the next deletes the key; delivered events go as
 * above, with no subscriber.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "base/base.h"
#include "keys/keys.h"
#include "maintenance/maintenance.h"
#include "outbox/outbox.h"


PG_FUNCTION_INFO_V1(okno_purge);
PG_FUNCTION_INFO_V1(okno_purge_0_3);
PG_FUNCTION_INFO_V1(okno_purge_0_5);
PG_FUNCTION_INFO_V1(okno_purge_0_7);

/* idempotency, keyed by (actor_id, request_key) */
static OknoPlan key_boundary_plan = {
	.sql =
	"SELECT actor_id, request_key::pg_catalog.text FROM %1$s.idempotency"
	" WHERE (actor_id, request_key) OPERATOR(pg_catalog.>) ($1, $2)"
	" ORDER BY actor_id, request_key OFFSET $3 LIMIT 1",
	.nargs = 3,
	.argtypes = {INT4OID, TEXTOID, INT4OID}
};

static OknoPlan key_delete_plan = {
	.sql =
	"DELETE FROM %1$s.idempotency"
	" WHERE (actor_id, request_key) OPERATOR(pg_catalog.>) ($1, $2)"
	" AND (actor_id, request_key) OPERATOR(pg_catalog.<=) ($3, $4)"
	" AND created_at OPERATOR(pg_catalog.<) $5",
	.nargs = 5,
	.argtypes = {INT4OID, TEXTOID, INT4OID, TEXTOID, TIMESTAMPTZOID}
};

static OknoPlan key_delete_rest_plan = {
	.sql =
	"DELETE FROM %1$s.idempotency"
	" WHERE (actor_id, request_key) OPERATOR(pg_catalog.>) ($1, $2)"
	" AND $3::pg_catalog.int4 IS NULL AND $4::pg_catalog.text IS NULL"
	" AND created_at OPERATOR(pg_catalog.<) $5",
	.nargs = 5,
	.argtypes = {INT4OID, TEXTOID, INT4OID, TEXTOID, TIMESTAMPTZOID}
};

/*
 * 0.7.0: the same, leaving a tombstone of each key deleted ($6: whether
 * tombstones are kept at all); "rest" is the last batch, up to the end
 * ($3 and $4 are then NULL)
 */
#define OKNO_SQL_KEY_DELETE_0_7(upper) \
	"WITH gone AS (DELETE FROM %1$s.idempotency AS i" \
	" WHERE (i.actor_id, i.request_key) OPERATOR(pg_catalog.>) ($1, $2)" upper \
	" AND i.created_at OPERATOR(pg_catalog.<) $5" \
	" RETURNING i.actor_id, i.request_key)," \
	" stones AS (INSERT INTO %1$s.okno_key_tombstone AS t (key_hash, expired_at)" \
	"  SELECT " OKNO_SQL_BOOKING_KEY_HASH("g.actor_id", "g.request_key") ", pg_catalog.now()" \
	"    FROM gone AS g WHERE $6" \
	"  ON CONFLICT (key_hash) DO UPDATE SET expired_at = EXCLUDED.expired_at)" \
	" SELECT pg_catalog.count(*) FROM gone"

static OknoPlan key_delete_0_7_plan = {
	.sql = OKNO_SQL_KEY_DELETE_0_7(
		" AND (i.actor_id, i.request_key) OPERATOR(pg_catalog.<=) ($3, $4)"),
	.nargs = 6,
	.argtypes = {INT4OID, TEXTOID, INT4OID, TEXTOID, TIMESTAMPTZOID, BOOLOID}
};

static OknoPlan key_delete_rest_0_7_plan = {
	.sql = OKNO_SQL_KEY_DELETE_0_7(
		" AND $3::pg_catalog.int4 IS NULL AND $4::pg_catalog.text IS NULL"),
	.nargs = 6,
	.argtypes = {INT4OID, TEXTOID, INT4OID, TEXTOID, TIMESTAMPTZOID, BOOLOID}
};

/* 0.7.0: operations' keys, okno_key, keyed by (operation, scope, request_key) */
static OknoPlan op_key_boundary_plan = {
	.sql =
	"SELECT operation, scope, request_key FROM %1$s.okno_key"
	" WHERE (operation, scope, request_key) OPERATOR(pg_catalog.>) ($1, $2, $3)"
	" ORDER BY operation, scope, request_key OFFSET $4 LIMIT 1",
	.nargs = 4,
	.argtypes = {TEXTOID, TEXTOID, TEXTOID, INT4OID},
	.own = true
};

#define OKNO_SQL_OP_KEY_DELETE(upper) \
	"WITH gone AS (DELETE FROM %1$s.okno_key AS k" \
	" WHERE (k.operation, k.scope, k.request_key) OPERATOR(pg_catalog.>) ($1, $2, $3)" upper \
	" AND k.created_at OPERATOR(pg_catalog.<) $7" \
	" RETURNING k.operation, k.scope, k.request_key)," \
	" stones AS (INSERT INTO %1$s.okno_key_tombstone AS t (key_hash, expired_at)" \
	"  SELECT " OKNO_SQL_OPERATION_KEY_HASH("g.operation", "g.scope", "g.request_key") \
	"         , pg_catalog.now()" \
	"    FROM gone AS g WHERE $8" \
	"  ON CONFLICT (key_hash) DO UPDATE SET expired_at = EXCLUDED.expired_at)" \
	" SELECT pg_catalog.count(*) FROM gone"

static OknoPlan op_key_delete_plan = {
	.sql = OKNO_SQL_OP_KEY_DELETE(
		" AND (k.operation, k.scope, k.request_key) OPERATOR(pg_catalog.<=) ($4, $5, $6)"),
	.nargs = 8,
	.argtypes = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID, BOOLOID},
	.own = true
};

static OknoPlan op_key_delete_rest_plan = {
	.sql = OKNO_SQL_OP_KEY_DELETE(
		" AND $4::pg_catalog.text IS NULL AND $5::pg_catalog.text IS NULL"
		" AND $6::pg_catalog.text IS NULL"),
	.nargs = 8,
	.argtypes = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID, BOOLOID},
	.own = true
};

/*
 * 0.7.0: the tombstones, keyed by key_hash; those that expired before $3,
 * or every one, a cluster's pending ones too, when $3 is 'infinity' (none
 * is kept)
 */
#define OKNO_SQL_TOMBSTONE_AGED \
	" AND (expired_at OPERATOR(pg_catalog.<) $3" \
	"  OR $3 OPERATOR(pg_catalog.=) 'infinity'::pg_catalog.timestamptz)"

static OknoPlan tombstone_boundary_plan = {
	.sql =
	"SELECT key_hash FROM %1$s.okno_key_tombstone WHERE key_hash OPERATOR(pg_catalog.>) $1"
	" ORDER BY key_hash OFFSET $2 LIMIT 1",
	.nargs = 2,
	.argtypes = {BYTEAOID, INT4OID},
	.own = true
};

static OknoPlan tombstone_delete_plan = {
	.sql =
	"DELETE FROM %1$s.okno_key_tombstone"
	" WHERE key_hash OPERATOR(pg_catalog.>) $1 AND key_hash OPERATOR(pg_catalog.<=) $2"
	OKNO_SQL_TOMBSTONE_AGED,
	.nargs = 3,
	.argtypes = {BYTEAOID, BYTEAOID, TIMESTAMPTZOID},
	.own = true
};

static OknoPlan tombstone_delete_rest_plan = {
	.sql =
	"DELETE FROM %1$s.okno_key_tombstone"
	" WHERE key_hash OPERATOR(pg_catalog.>) $1 AND $2::pg_catalog.bytea IS NULL"
	OKNO_SQL_TOMBSTONE_AGED,
	.nargs = 3,
	.argtypes = {BYTEAOID, BYTEAOID, TIMESTAMPTZOID},
	.own = true
};

/* outbox, keyed by id */
static OknoPlan event_boundary_plan = {
	.sql =
	"SELECT id FROM %1$s.outbox WHERE id OPERATOR(pg_catalog.>) $1"
	" ORDER BY id OFFSET $2 LIMIT 1",
	.nargs = 2,
	.argtypes = {UUIDOID, INT4OID}
};

static OknoPlan event_delete_plan = {
	.sql =
	"DELETE FROM %1$s.outbox"
	" WHERE id OPERATOR(pg_catalog.>) $1 AND id OPERATOR(pg_catalog.<=) $2"
	" AND delivered_at OPERATOR(pg_catalog.<) $3",
	.nargs = 3,
	.argtypes = {UUIDOID, UUIDOID, TIMESTAMPTZOID}
};

static OknoPlan event_delete_rest_plan = {
	.sql =
	"DELETE FROM %1$s.outbox"
	" WHERE id OPERATOR(pg_catalog.>) $1 AND $2::pg_catalog.uuid IS NULL"
	" AND delivered_at OPERATOR(pg_catalog.<) $3",
	.nargs = 3,
	.argtypes = {UUIDOID, UUIDOID, TIMESTAMPTZOID}
};

/*
 * 0.8.0: the same on one shard of an outbox Citus distributes by bucket
 * ($4: the shard's buckets, a constant of a custom plan, which Citus
 * prunes to the shard; the boundary is given the walk's arguments too)
 */
#define EVENT_SHARD_ARGS(second) \
	.nargs = 4, \
	.argtypes = {UUIDOID, second, TIMESTAMPTZOID, INT4ARRAYOID}, \
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
#define OKNO_SQL_SHARD " AND " OKNO_OUTBOX_BUCKET_COLUMN " OPERATOR(pg_catalog.=) ANY ($4)"

static OknoPlan event_boundary_shard_plan = {
	.sql =
	"SELECT id FROM %1$s.outbox WHERE id OPERATOR(pg_catalog.>) $1" OKNO_SQL_SHARD
	" ORDER BY id OFFSET $2 LIMIT 1",
	EVENT_SHARD_ARGS(INT4OID)
};

static OknoPlan event_delete_shard_plan = {
	.sql =
	"DELETE FROM %1$s.outbox"
	" WHERE id OPERATOR(pg_catalog.>) $1 AND id OPERATOR(pg_catalog.<=) $2" OKNO_SQL_SHARD
	" AND delivered_at OPERATOR(pg_catalog.<) $3",
	EVENT_SHARD_ARGS(UUIDOID)
};

static OknoPlan event_delete_rest_shard_plan = {
	.sql =
	"DELETE FROM %1$s.outbox"
	" WHERE id OPERATOR(pg_catalog.>) $1 AND $2::pg_catalog.uuid IS NULL" OKNO_SQL_SHARD
	" AND delivered_at OPERATOR(pg_catalog.<) $3",
	EVENT_SHARD_ARGS(UUIDOID)
};

/*
 * The same where Citus has the named subscribers too (outbox/fan_out.c:
 * okno_delivery distributed by bucket with outbox): an event goes once
 * every subscriber is done with it (no undelivered row of a subscriber
 * that exists: a removed one's leftover rows hold nothing back), with
 * every row of it, in its shard (docs/citus/SUBSCRIBERS.md)
 */
#define D_IN(e) " AND " e ".bucket OPERATOR(pg_catalog.=) ANY ($4)"
#define OKNO_SQL_SHARD_SUBSCRIBERS_DONE \
	" AND NOT EXISTS (SELECT FROM %1$s.okno_subscriber AS u" \
	"   JOIN %1$s.okno_delivery AS d ON d.subscriber OPERATOR(pg_catalog.=) u.name" D_IN("d") \
	"    AND d.bucket OPERATOR(pg_catalog.=) e." OKNO_OUTBOX_BUCKET_COLUMN \
	"    AND d.event_id OPERATOR(pg_catalog.=) e.id" \
	"  WHERE d.delivered_at IS NULL)" \
	" RETURNING e." OKNO_OUTBOX_BUCKET_COLUMN " AS bucket, e.id)," \
	" states AS (DELETE FROM %1$s.okno_delivery AS d USING gone" \
	"  WHERE d.bucket OPERATOR(pg_catalog.=) gone.bucket" D_IN("d") \
	"    AND d.event_id OPERATOR(pg_catalog.=) gone.id)" \
	" SELECT pg_catalog.count(*) FROM gone"

static OknoPlan event_delete_shard_named_plan = {
	.sql =
	"WITH gone AS (DELETE FROM %1$s.outbox AS e"
	" WHERE e.id OPERATOR(pg_catalog.>) $1 AND e.id OPERATOR(pg_catalog.<=) $2" D_IN("e")
	" AND e.delivered_at OPERATOR(pg_catalog.<) $3"
	OKNO_SQL_SHARD_SUBSCRIBERS_DONE,
	EVENT_SHARD_ARGS(UUIDOID)
};

static OknoPlan event_delete_rest_shard_named_plan = {
	.sql =
	"WITH gone AS (DELETE FROM %1$s.outbox AS e"
	" WHERE e.id OPERATOR(pg_catalog.>) $1 AND $2::pg_catalog.uuid IS NULL" D_IN("e")
	" AND e.delivered_at OPERATOR(pg_catalog.<) $3"
	OKNO_SQL_SHARD_SUBSCRIBERS_DONE,
	EVENT_SHARD_ARGS(UUIDOID)
};

/*
 * 0.5.0: the same, for events every subscriber is done with ($4: this
 * cluster's system identifier), with the subscribers' delivery states
 */
#define OKNO_SQL_SUBSCRIBERS_DONE \
	" AND NOT EXISTS (SELECT FROM %1$s.okno_subscriber AS u" \
	"   JOIN %1$s.okno_delivery AS d ON d.subscriber OPERATOR(pg_catalog.=) u.name" \
	"    AND d.event_id OPERATOR(pg_catalog.=) e.id" \
	"  WHERE d.delivered_at IS NULL)" \
	" AND (e.created_xid IS NULL OR NOT EXISTS (SELECT FROM %1$s.okno_subscriber AS u" \
	"  WHERE u.copied_system OPERATOR(pg_catalog.<>) $4" \
	"     OR NOT pg_catalog.pg_visible_in_snapshot(e.created_xid, u.copied_snapshot)))" \
	" RETURNING e.id)," \
	" states AS (DELETE FROM %1$s.okno_delivery AS d USING gone, %1$s.okno_subscriber AS u" \
	"  WHERE d.subscriber OPERATOR(pg_catalog.=) u.name AND d.event_id OPERATOR(pg_catalog.=) gone.id)" \
	" SELECT pg_catalog.count(*) FROM gone"

static OknoPlan event_delete_0_5_plan = {
	.sql =
	"WITH gone AS (DELETE FROM %1$s.outbox AS e"
	" WHERE e.id OPERATOR(pg_catalog.>) $1 AND e.id OPERATOR(pg_catalog.<=) $2"
	" AND e.delivered_at OPERATOR(pg_catalog.<) $3"
	OKNO_SQL_SUBSCRIBERS_DONE,
	.nargs = 4,
	.argtypes = {UUIDOID, UUIDOID, TIMESTAMPTZOID, INT8OID}
};

static OknoPlan event_delete_rest_0_5_plan = {
	.sql =
	"WITH gone AS (DELETE FROM %1$s.outbox AS e"
	" WHERE e.id OPERATOR(pg_catalog.>) $1 AND $2::pg_catalog.uuid IS NULL"
	" AND e.delivered_at OPERATOR(pg_catalog.<) $3"
	OKNO_SQL_SUBSCRIBERS_DONE,
	.nargs = 4,
	.argtypes = {UUIDOID, UUIDOID, TIMESTAMPTZOID, INT8OID}
};

/* 0.3.0: how far back the purge went, for okno_verify */
static OknoPlan horizon_plan = {
	.sql =
	"INSERT INTO %1$s.okno_purge_horizon AS h"
	" (singleton, keys_purged_before, events_purged_before) VALUES (true, $1, $2)"
	" ON CONFLICT (singleton) DO UPDATE SET"
	" keys_purged_before = GREATEST(h.keys_purged_before, EXCLUDED.keys_purged_before),"
	" events_purged_before = GREATEST(h.events_purged_before, EXCLUDED.events_purged_before)",
	.nargs = 2,
	.argtypes = {TIMESTAMPTZOID, TIMESTAMPTZOID},
	.own = true
};

/*
 * now() - age, after checking age.
 */
static TimestampTz
cutoff(FunctionCallInfo fcinfo, int argno, const char *name)
{
	Interval   *age;

	okno_require_arg(fcinfo, argno, name, ERRCODE_INVALID_PARAMETER_VALUE,
					 "Pass an age such as '30 days'.");
	age = PG_GETARG_INTERVAL_P(argno);

	/*
	 * Every field on its own: '-1 month +30 days' compares as zero, yet
	 * subtracted from a date in a 31-day month it reaches a day into the
	 * future ('-1 month +31 days', two), and the purge would delete keys
	 * created minutes ago.
	 */
	if (age->month < 0 || age->day < 0 || age->time < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative", name),
				 errdetail("Each of its months, days and time must be zero or more; the interval given was %s.",
						   DatumGetCString(DirectFunctionCall1(interval_out,
															   IntervalPGetDatum(age)))),
				 errhint("Pass an age such as '30 days'.")));

	/*
	 * An age reaching back past the first representable timestamp (4713 BC)
	 * means "nothing is that old": the cutoff is -infinity and nothing is
	 * deleted.  6000 years back from any date okno runs at stays in range.
	 */
	if (DatumGetBool(DirectFunctionCall2(interval_ge, IntervalPGetDatum(age),
										 DirectFunctionCall3(interval_in,
															 CStringGetDatum("6000 years"),
															 ObjectIdGetDatum(InvalidOid),
															 Int32GetDatum(-1)))))
		return DT_NOBEGIN;

	return DatumGetTimestampTz(DirectFunctionCall2(timestamptz_mi_interval,
												   TimestampTzGetDatum(GetCurrentTransactionStartTimestamp()),
												   IntervalPGetDatum(age)));
}

/* idempotency, keyed by (actor_id, request_key); from 0.7.0 with tombstones */
static const OknoPurgeWalk key_walk = {
	"idempotency purge", 2, &key_boundary_plan, &key_delete_plan, &key_delete_rest_plan, false, NULL
};
static const OknoPurgeWalk key_walk_0_7 = {
	"idempotency purge", 2, &key_boundary_plan, &key_delete_0_7_plan,
	&key_delete_rest_0_7_plan, true, NULL
};

/* okno_key, keyed by (operation, scope, request_key) */
static const OknoPurgeWalk op_key_walk = {
	"okno_key purge", 3, &op_key_boundary_plan, &op_key_delete_plan, &op_key_delete_rest_plan, true, NULL
};

/* okno_key_tombstone, keyed by key_hash */
static const OknoPurgeWalk tombstone_walk = {
	"tombstone purge", 1, &tombstone_boundary_plan, &tombstone_delete_plan,
	&tombstone_delete_rest_plan, false, NULL
};

/* the same on a Citus cluster, in two purges (purge_cluster.c) */
static const OknoPurgeWalk cluster_key_walk = {
	"idempotency purge", 2, &key_boundary_plan, NULL, NULL, false, &okno_cluster_booking_keys
};
static const OknoPurgeWalk cluster_op_key_walk = {
	"okno_key purge", 3, &op_key_boundary_plan, NULL, NULL, false, &okno_cluster_operation_keys
};

/* outbox, keyed by id; from 0.5.0 only what every subscriber is done with */
static const OknoPurgeWalk event_walk = {
	"outbox purge", 1, &event_boundary_plan, &event_delete_plan, &event_delete_rest_plan, false, NULL
};
static const OknoPurgeWalk event_shard_walk = {
	"outbox purge", 1, &event_boundary_shard_plan, &event_delete_shard_plan,
	&event_delete_rest_shard_plan, false, NULL
};
static const OknoPurgeWalk event_shard_named_walk = {
	"outbox purge", 1, &event_boundary_shard_plan, &event_delete_shard_named_plan,
	&event_delete_rest_shard_named_plan, true, NULL
};
static const OknoPurgeWalk event_walk_0_5 = {
	"outbox purge", 1, &event_boundary_plan, &event_delete_0_5_plan,
	&event_delete_rest_0_5_plan, true, NULL
};

/*
 * Delete the keys of idempotency created before 'before'; with tombstones
 * (0.7.0), leave one for each (when 'keep', that is when
 * okno.key_tombstone_age is not 0), in two purges where Citus has the
 * table (cluster).
 */
static uint64
purge_keys(TimestampTz before, bool tombstones, bool keep, bool cluster, bool settle)
{
	/* no key is empty, so (INT_MIN, '') is below every row */
	Datum		start[2] = {Int32GetDatum(PG_INT32_MIN), PointerGetDatum(cstring_to_text(""))};
	Datum		extra[3] = {TimestampTzGetDatum(before), BoolGetDatum(keep), BoolGetDatum(settle)};

	if (cluster)
		return okno_purge_walk(&cluster_key_walk, start, extra, 3);
	return okno_purge_walk(tombstones ? &key_walk_0_7 : &key_walk, start, extra, tombstones ? 2 : 1);
}

/*
 * 0.7.0: delete the operations' keys of okno_key created before 'before',
 * leaving a tombstone of each when 'keep'; in two purges where Citus has
 * okno_key or the tombstones (cluster).
 */
static uint64
purge_operation_keys(TimestampTz before, bool keep, bool cluster, bool settle)
{
	/* no operation's name is empty: ('', '', '') is below every row */
	Datum		empty = PointerGetDatum(cstring_to_text(""));
	Datum		start[3] = {empty, empty, empty};
	Datum		extra[3] = {TimestampTzGetDatum(before), BoolGetDatum(keep), BoolGetDatum(settle)};

	return okno_purge_walk(cluster ? &cluster_op_key_walk : &op_key_walk, start, extra,
					  cluster ? 3 : 2);
}

/*
 * 0.7.0: delete the tombstones that expired before 'before'.
 */
static void
purge_tombstones(TimestampTz before)
{
	bytea	   *empty = palloc(VARHDRSZ);	/* below every hash */
	Datum		start;
	Datum		extra = TimestampTzGetDatum(before);

	SET_VARSIZE(empty, VARHDRSZ);
	start = PointerGetDatum(empty);
	(void) okno_purge_walk(&tombstone_walk, &start, &extra, 1);
}

/*
 * Delete the events delivered before 'before'; from okno 0.5.0 on
 * (subscribers) only those every subscriber is done with, with their
 * delivery states; where Citus distributes outbox by bucket (by_shard),
 * shard by shard, in the shards' order, with the named subscribers' rows
 * where Citus has them.
 */
static uint64
purge_events(TimestampTz before, bool subscribers, bool by_shard)
{
	Datum		start = UUIDPGetDatum(palloc0(sizeof(pg_uuid_t)));	/* the nil UUID */
	Datum		extra[2] = {TimestampTzGetDatum(before), Int64GetDatum((int64) GetSystemIdentifier())};
	const OknoOutboxShards *sh;
	const OknoPurgeWalk *walk;
	uint64		deleted = 0;
	int			k;

	if (!by_shard)
		return okno_purge_walk(subscribers ? &event_walk_0_5 : &event_walk, &start, extra,
						  subscribers ? 2 : 1);
	walk = okno_named_on_citus() ? &event_shard_named_walk : &event_shard_walk;
	sh = okno_outbox_shards();
	for (k = 0; k < sh->nshards; k++)
	{
		extra[1] = sh->shard[k].buckets;
		deleted += okno_purge_walk(walk, &start, extra, 2);
	}
	return deleted;
}

/*
 * 0.7.0: the tombstones older than okno.key_tombstone_age, then the keys
 * created before 'before', of idempotency (app_tables) and of okno_key,
 * leaving a tombstone of each; in two purges where Citus has the keys
 * (keys_citus, op_keys_citus) or the tombstones (stones_citus).  The keys
 * deleted.
 */
static uint64
purge_keys_0_7(TimestampTz before, bool app_tables, bool keys_citus, bool op_keys_citus,
			   bool stones_citus)
{
	int			age = okno_key_tombstone_age();
	TimestampTz stones_before;
	bool		settle;
	uint64		keys;

	/* okno.key_tombstone_age = 0: none is kept, every one goes */
	if (age == 0)
		stones_before = DT_NOEND;
	else
		stones_before = GetCurrentTransactionStartTimestamp() - (TimestampTz) age * USECS_PER_SEC;
	purge_tombstones(stones_before);
	settle = age == 0 || !(keys_citus || op_keys_citus) ||
		okno_purge_cluster_may_settle(stones_citus);
	keys = app_tables ? purge_keys(before, true, age != 0, keys_citus, settle) : 0;
	keys += purge_operation_keys(before, age != 0, op_keys_citus, settle);
	if (age != 0 && (keys_citus || op_keys_citus))
		okno_purge_cluster_note_marked();
	return keys;
}

/*
 * The purge of each version: record_horizon from 0.3.0, subscribers from
 * 0.5.0, tombstones and operations' keys from 0.7.0.
 */
static void
purge(FunctionCallInfo fcinfo, bool record_horizon, bool subscribers, bool tombstones)
{
	TimestampTz keys_before = cutoff(fcinfo, 0, "keys_older_than");
	TimestampTz events_before = cutoff(fcinfo, 1, "delivered_older_than");
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[2];
	bool		nulls[2] = {false, false};
	OknoGuard	guard;
	uint64		keys;
	uint64		events = 0;
	bool		app_tables = true;
	bool		stones_citus;
	bool		keys_citus;
	bool		op_keys_citus;
	bool		events_citus;

	PreventCommandIfReadOnly("okno_purge()");
	InitMaterializedSRF(fcinfo, 0);

	/*
	 * From 0.7.0 on, a database that uses only operations' keys, with none
	 * of the application's five tables, has its keys and tombstones purged
	 * (okno's own tables, written as the caller); one with some of them is
	 * bound, and told what is wrong, as before.
	 */
	if (tombstones)
		app_tables = !okno_application_tables_absent();

	/* which tables Citus has: their statements are a cluster's (above) */
	stones_citus = okno_citus_table(okno_relid_by_name(OKNO_TOMBSTONE_TABLE));
	keys_citus = app_tables &&
		(okno_binding()->citus[OKNO_REL_IDEMPOTENCY] || stones_citus);
	op_keys_citus = okno_citus_table(okno_relid_by_name(OKNO_KEY_TABLE)) || stones_citus;
	events_citus = app_tables && okno_binding()->citus[OKNO_REL_OUTBOX];

	if (app_tables)
		okno_guard_begin(&guard);
	else
		okno_guard_begin_owner(&guard, InvalidOid);
	okno_spi_connect();
	if (keys_citus || op_keys_citus || (app_tables && okno_binding_citus(okno_binding())))
		okno_purge_cluster_check(app_tables, tombstones);
	if (tombstones)
		keys = purge_keys_0_7(keys_before, app_tables, keys_citus, op_keys_citus, stones_citus);
	else
		keys = purge_keys(keys_before, false, false, false, false);
	/* on a cluster, with Citus's subscribers if any (okno_purge_cluster_check) */
	if (app_tables)
		events = purge_events(events_before, subscribers && !events_citus,
							  events_citus && okno_binding()->outbox_buckets);
	values[0] = Int64GetDatum((int64) keys);
	values[1] = Int64GetDatum((int64) events);
	if (record_horizon)
	{
		Datum		args[2];
		int			rc;

		args[0] = TimestampTzGetDatum(keys_before);
		args[1] = TimestampTzGetDatum(events_before);
		rc = SPI_execute_plan(okno_plan(&horizon_plan), args, NULL, false, 0);
		okno_check_spi(rc, SPI_OK_INSERT, "purge horizon");
	}
	okno_spi_finish();
	okno_guard_end(&guard);

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * okno_purge(keys_older_than interval, delivered_older_than interval)
 *	 RETURNS TABLE(keys_deleted bigint, events_deleted bigint)
 *
 * okno 0.2.0's binding: no purge horizon table.
 */
Datum
okno_purge(PG_FUNCTION_ARGS)
{
	purge(fcinfo, false, false, false);
	return (Datum) 0;
}

/*
 * The same, recording the purge horizon for okno_verify (okno 0.3.0).
 */
Datum
okno_purge_0_3(PG_FUNCTION_ARGS)
{
	purge(fcinfo, true, false, false);
	return (Datum) 0;
}

/*
 * The same, leaving what a subscriber still needs (okno 0.5.0).
 */
Datum
okno_purge_0_5(PG_FUNCTION_ARGS)
{
	purge(fcinfo, true, true, false);
	return (Datum) 0;
}

/*
 * The same, leaving a tombstone of each key it deletes, operations' keys
 * too, and purging the tombstones older than okno.key_tombstone_age (okno
 * 0.7.0).
 */
Datum
okno_purge_0_7(PG_FUNCTION_ARGS)
{
	purge(fcinfo, true, true, true);
	return (Datum) 0;
}
