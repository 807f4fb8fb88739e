/*-------------------------------------------------------------------------
 *
 * routine.c
 *	  Where a subscriber's delivery state lives and the statements that
 *	  read and change it: one table of routines per kind of subscriber.
 *
 * The default subscriber's state of an event is outbox's own columns
 * (delivered_at, attempts, last_error, available_at, parked_at); a named
 * subscriber's is its row of okno_delivery, with the same columns, written
 * only when the event needs a state of its own.  The default one keeps its
 * state in the event's row because it is the delivery the course teaches:
 * a database that has no other subscriber (most do) pays nothing for
 * subscribers, a create writes one row per event and no fan-out, the
 * default drain is one partial index scan and one update of the rows it
 * hands out, and the course's own service, reading and writing
 * outbox.delivered_at, stays right.  The price is that every delivery verb
 * has two statements, one per place; this file holds both, side by side,
 * and hands them out as one table chosen once from the subscriber argument
 * (as an index AM hands out its IndexAmRoutine), so that each SQL verb
 * (failure.c, deadletter.c, drain.c, wait.c) is written once against it.
 *
 * Every per-event statement takes ($1 event id, $2 subscriber, ...); the
 * default subscriber's leave $2 unused.  Where Citus distributes outbox by
 * bucket, the default subscriber has a third table, whose statements take
 * the event's bucket as $2 (looked up by its route), so that Citus sends
 * each to the event's shard: an id alone names no shard there.  Where
 * Citus keeps outbox in one shard, a fourth: the default one's statements
 * with the drain of drain_buckets.c.  Where Citus has the named
 * subscribers too (okno_delivery distributed by bucket with outbox), a
 * fifth: a named one's statements with the event's bucket as their $7, and
 * its drain shard by shard (drain_buckets.c).
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/uuid.h"

#include "base/base.h"
#include "delivery/delivery.h"

/*
 * The two places, spelled for the statements below: the state's table and
 * alias s, the event's columns (alias e, or s itself where the state is the
 * event's row), and the condition that row s is event $1's (of subscriber
 * $2).
 */
#define OUTBOX_TABLE	"outbox"
#define OUTBOX_FROM		"%1$s.outbox AS s"
#define OUTBOX_EVENT	"s"
#define OUTBOX_ROW		"s.id OPERATOR(pg_catalog.=) $1"

/*
 * The default subscriber's state where Citus distributes outbox by bucket:
 * the event's row in its bucket ($2, looked up first by route_bucket), so
 * that Citus sends each statement to the one shard
 */
#define BUCKET_TABLE	OUTBOX_TABLE
#define BUCKET_FROM		OUTBOX_FROM
#define BUCKET_EVENT	OUTBOX_EVENT
#define BUCKET_ROW \
	OUTBOX_ROW " AND s." OKNO_OUTBOX_BUCKET_COLUMN " OPERATOR(pg_catalog.=) $2"

#define DELIVERY_TABLE	"okno_delivery"
#define DELIVERY_FROM \
	"%1$s.okno_delivery AS s JOIN %1$s.outbox AS e ON e.id OPERATOR(pg_catalog.=) s.event_id"
#define DELIVERY_EVENT	"e"
#define DELIVERY_ROW \
	"s.event_id OPERATOR(pg_catalog.=) $1 AND s.subscriber OPERATOR(pg_catalog.=) $2"

/*
 * A named subscriber's state where Citus has the subscribers (outbox and
 * okno_delivery distributed by bucket, colocated): its row in the event's
 * bucket, which every statement takes as $7 (looked up first by
 * route_bucket; the statements with fewer arguments leave those between
 * unused), so that Citus sends each statement to the event's shard
 */
#define NAMED_BUCKET_TABLE	DELIVERY_TABLE
#define NAMED_BUCKET_FROM \
	"%1$s.okno_delivery AS s JOIN %1$s.outbox AS e" \
	" ON e." OKNO_OUTBOX_BUCKET_COLUMN " OPERATOR(pg_catalog.=) $7" \
	" AND e.id OPERATOR(pg_catalog.=) s.event_id"
#define NAMED_BUCKET_EVENT	DELIVERY_EVENT
#define NAMED_BUCKET_ROW	DELIVERY_ROW " AND s.bucket OPERATOR(pg_catalog.=) $7"

/* the state's attempts and whether it is parked, locked ($1, $2) */
#define SQL_LOCK(K) \
	"SELECT s.attempts, s.parked_at IS NOT NULL FROM %1$s." K##_TABLE " AS s" \
	" WHERE " K##_ROW " FOR UPDATE"

/*
 * A failed delivery ($3 attempts, $4 error, $5 available_at or NULL, $6
 * parked_at or NULL: an event parked already keeps its parked_at), the
 * state returned as RET
 */
#define SQL_FAIL(K, RET) \
	"UPDATE %1$s." K##_TABLE " AS s SET delivered_at = NULL, attempts = $3, last_error = $4," \
	" available_at = $5, parked_at = COALESCE(s.parked_at, $6)" \
	" WHERE " K##_ROW " RETURNING " RET

/* a delivered event pending again, attempts unchanged */
#define SQL_RELEASE(K) \
	"UPDATE %1$s." K##_TABLE " AS s SET delivered_at = NULL" \
	" WHERE " K##_ROW " AND s.delivered_at IS NOT NULL"

/* an undelivered event unparked: attempts reset, available at once */
#define SQL_REQUEUE(K) \
	"UPDATE %1$s." K##_TABLE " AS s SET parked_at = NULL, attempts = 0, available_at = NULL" \
	" WHERE " K##_ROW " AND s.delivered_at IS NULL"

/* a parked event as it is, locked, for its record in okno_discarded */
#define SQL_DISCARD_LOCK(K) \
	"SELECT " K##_EVENT ".kind, " K##_EVENT ".payload, s.attempts, s.last_error, s.parked_at" \
	"  FROM " K##_FROM \
	" WHERE " K##_ROW " AND s.parked_at IS NOT NULL AND s.delivered_at IS NULL" \
	" FOR UPDATE OF s"

/* a discarded event done for the subscriber ($3: when) */
#define SQL_DISCARD_DONE(K) \
	"UPDATE %1$s." K##_TABLE " AS s SET delivered_at = $3, parked_at = NULL" \
	" WHERE " K##_ROW

/* when the first delayed event comes due (NULL: none), of subscriber OWN */
#define SQL_NEXT_DUE(K, OWN) \
	"SELECT pg_catalog.min(s.available_at) FROM %1$s." K##_TABLE " AS s" \
	" WHERE s.delivered_at IS NULL AND s.parked_at IS NULL" OWN \
	"   AND s.available_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp()"

#define EVENT_ARGS		.nargs = 2, .argtypes = {UUIDOID, TEXTOID}
#define FAIL_ARGS \
	.nargs = 6, \
	.argtypes = {UUIDOID, TEXTOID, INT4OID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID}

/*
 * The default subscriber's failure returns the outbox row as a whole (a
 * value of the table's row type as it is stored, so it matches the
 * function's result type even after a column of outbox was dropped),
 * okno's columns of it (0.6.0's OUT parameters), or, called with
 * "default", the state as the columns of a row of okno_delivery, named as
 * its columns are (failure.c forms the row by name: an okno_delivery of an
 * okno not yet updated to 0.8.0 has no bucket).
 */
#define OUTBOX_COLUMNS \
	"s.id, s.kind::pg_catalog.text, s.payload, s.created_at, s.delivered_at," \
	" s.attempts, s.last_error, s.available_at, s.parked_at, s.created_xid"
#define OUTBOX_AS_DELIVERY_IN(F, bucket) \
	"'default'::pg_catalog.text AS subscriber, s.id AS event_id," \
	" " F##_STORED_KEY("s") " AS " F##_DELIVERY_KEY "," \
	" s.kind OPERATOR(pg_catalog.=) 'booking_created' AS first, s.delivered_at, s.attempts," \
	" s.last_error, s.available_at, s.parked_at, " bucket " AS bucket"
#define OUTBOX_AS_DELIVERY(F) OUTBOX_AS_DELIVERY_IN(F, "0")

static OknoPlan outbox_lock = {.sql = SQL_LOCK(OUTBOX), EVENT_ARGS};
static OknoPlan outbox_fail_row = {.sql = SQL_FAIL(OUTBOX, "s"), FAIL_ARGS};
static OknoPlan outbox_fail_columns = {.sql = SQL_FAIL(OUTBOX, OUTBOX_COLUMNS), FAIL_ARGS};
#define SQL_FAIL_AS_DELIVERY(F) SQL_FAIL(OUTBOX, OUTBOX_AS_DELIVERY(F))
static OknoPlan outbox_fail_delivery = {
	OKNO_PLAN_FORMS(SQL_FAIL_AS_DELIVERY),
	FAIL_ARGS
};
static OknoPlan outbox_release = {.sql = SQL_RELEASE(OUTBOX), EVENT_ARGS};
static OknoPlan outbox_requeue = {.sql = SQL_REQUEUE(OUTBOX), EVENT_ARGS};
static OknoPlan outbox_discard_lock = {.sql = SQL_DISCARD_LOCK(OUTBOX), EVENT_ARGS};
static OknoPlan outbox_discard_done = {
	.sql = SQL_DISCARD_DONE(OUTBOX),
	.nargs = 3,
	.argtypes = {UUIDOID, TEXTOID, TIMESTAMPTZOID}
};
static OknoPlan outbox_next_due = {
	.sql = SQL_NEXT_DUE(OUTBOX, ""),
	.nargs = 1,
	.argtypes = {TEXTOID}
};

/*
 * Every parked event that matches the filters ($1 kind, $2 error_like, $3
 * parked_before; NULL matches anything), locked in id order so that two
 * bulk requeues never deadlock, requeued
 */
#define SQL_OUTBOX_REQUEUE_PARKED(in) \
	"WITH picked AS (" \
	" SELECT s.id FROM %1$s.outbox AS s" \
	"  WHERE s.parked_at IS NOT NULL AND s.delivered_at IS NULL" in \
	"    AND ($1::pg_catalog.text IS NULL OR s.kind::pg_catalog.text OPERATOR(pg_catalog.=) $1)" \
	"    AND ($2::pg_catalog.text IS NULL OR s.last_error OPERATOR(pg_catalog.~~) $2)" \
	"    AND ($3::pg_catalog.timestamptz IS NULL OR s.parked_at OPERATOR(pg_catalog.<) $3)" \
	"  ORDER BY s.id FOR UPDATE)" \
	" UPDATE %1$s.outbox AS s SET parked_at = NULL, attempts = 0, available_at = NULL" \
	"  FROM picked WHERE s.id OPERATOR(pg_catalog.=) picked.id" in
static OknoPlan outbox_requeue_parked = {
	.sql = SQL_OUTBOX_REQUEUE_PARKED(""),
	.nargs = 4,
	.argtypes = {TEXTOID, TEXTOID, TIMESTAMPTZOID, TEXTOID}
};

/*
 * The same of one shard's buckets ($5), where Citus distributes outbox by
 * bucket (okno_outbox_shards_exec, outbox/shards.c, runs it for each shard)
 */
static OknoPlan bucket_requeue_parked = {
	.sql = SQL_OUTBOX_REQUEUE_PARKED(" AND s." OKNO_OUTBOX_BUCKET_COLUMN " OPERATOR(pg_catalog.=) ANY ($5)"),
	.nargs = 5,
	.argtypes = {TEXTOID, TEXTOID, TIMESTAMPTZOID, TEXTOID, INT4ARRAYOID},
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
};

/*
 * The default subscriber's per-event statements where Citus distributes
 * outbox by bucket, each planned for its call (Citus routes it by the
 * bucket's value), and the event's bucket ($1: its id; none: no such
 * event)
 */
#define BUCKET_ARGS(n, ...) \
	.nargs = n, .argtypes = {UUIDOID, INT4OID, __VA_ARGS__}, \
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
#define BUCKET_FAIL_ARGS BUCKET_ARGS(6, INT4OID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID)
static OknoPlan bucket_lock = {.sql = SQL_LOCK(BUCKET), BUCKET_ARGS(2)};
static OknoPlan bucket_fail_row = {.sql = SQL_FAIL(BUCKET, "s"), BUCKET_FAIL_ARGS};
static OknoPlan bucket_fail_columns = {.sql = SQL_FAIL(BUCKET, OUTBOX_COLUMNS), BUCKET_FAIL_ARGS};
static OknoPlan bucket_fail_delivery = {
	.sql = SQL_FAIL(BUCKET, OUTBOX_AS_DELIVERY_IN(OKNO_F_CURRENT, "s." OKNO_OUTBOX_BUCKET_COLUMN)),
	BUCKET_FAIL_ARGS
};
static OknoPlan bucket_release = {.sql = SQL_RELEASE(BUCKET), BUCKET_ARGS(2)};
static OknoPlan bucket_requeue = {.sql = SQL_REQUEUE(BUCKET), BUCKET_ARGS(2)};
static OknoPlan bucket_discard_lock = {.sql = SQL_DISCARD_LOCK(BUCKET), BUCKET_ARGS(2)};
static OknoPlan bucket_discard_done = {.sql = SQL_DISCARD_DONE(BUCKET), BUCKET_ARGS(3, TIMESTAMPTZOID)};
static OknoPlan bucket_of_event = {
	.sql =
	"SELECT s." OKNO_OUTBOX_BUCKET_COLUMN " FROM %1$s.outbox AS s"
	" WHERE s.id OPERATOR(pg_catalog.=) $1",
	.nargs = 1,
	.argtypes = {UUIDOID},
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
};

/*
 * A named subscriber's per-event statements where Citus has the
 * subscribers: the event's bucket is $7 (okno_delivery_exec puts it
 * there), each planned for its call, as the default subscriber's above
 */
#define NAMED_BUCKET_ARGS(...) \
	.nargs = 7, .argtypes = {UUIDOID, TEXTOID, __VA_ARGS__, INT4OID}, \
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
#define NAMED_BUCKET_EVENT_ARGS NAMED_BUCKET_ARGS(INT4OID, INT4OID, INT4OID, INT4OID)
static OknoPlan named_bucket_lock = {.sql = SQL_LOCK(NAMED_BUCKET), NAMED_BUCKET_EVENT_ARGS};
static OknoPlan named_bucket_fail = {
	.sql = SQL_FAIL(NAMED_BUCKET, "s"),
	NAMED_BUCKET_ARGS(INT4OID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID)
};
static OknoPlan named_bucket_release = {.sql = SQL_RELEASE(NAMED_BUCKET), NAMED_BUCKET_EVENT_ARGS};
static OknoPlan named_bucket_requeue = {.sql = SQL_REQUEUE(NAMED_BUCKET), NAMED_BUCKET_EVENT_ARGS};
static OknoPlan named_bucket_discard_lock = {
	.sql = SQL_DISCARD_LOCK(NAMED_BUCKET),
	NAMED_BUCKET_EVENT_ARGS
};
static OknoPlan named_bucket_discard_done = {
	.sql = SQL_DISCARD_DONE(NAMED_BUCKET),
	NAMED_BUCKET_ARGS(TIMESTAMPTZOID, INT4OID, INT4OID, INT4OID)
};

static OknoPlan delivery_lock = {.sql = SQL_LOCK(DELIVERY), EVENT_ARGS};
static OknoPlan delivery_fail = {.sql = SQL_FAIL(DELIVERY, "s"), FAIL_ARGS};
static OknoPlan delivery_release = {.sql = SQL_RELEASE(DELIVERY), EVENT_ARGS};
static OknoPlan delivery_requeue = {.sql = SQL_REQUEUE(DELIVERY), EVENT_ARGS};
static OknoPlan delivery_discard_lock = {.sql = SQL_DISCARD_LOCK(DELIVERY), EVENT_ARGS};
static OknoPlan delivery_discard_done = {
	.sql = SQL_DISCARD_DONE(DELIVERY),
	.nargs = 3,
	.argtypes = {UUIDOID, TEXTOID, TIMESTAMPTZOID}
};
static OknoPlan delivery_next_due = {
	.sql = SQL_NEXT_DUE(DELIVERY, " AND s.subscriber OPERATOR(pg_catalog.=) $1"),
	.nargs = 1,
	.argtypes = {TEXTOID}
};

/*
 * the same for the subscribers' states ($4: one subscriber, or NULL: all);
 * in(e) restricts row e of okno_delivery or outbox to one shard's buckets
 */
#define SQL_DELIVERY_REQUEUE_PARKED(in) \
	"WITH picked AS (" \
	" SELECT s.subscriber, s.event_id, s.bucket FROM %1$s.okno_delivery AS s" \
	"   JOIN %1$s.outbox AS e ON e.id OPERATOR(pg_catalog.=) s.event_id" in("e") \
	"  WHERE s.parked_at IS NOT NULL AND s.delivered_at IS NULL" in("s") \
	"    AND ($4::pg_catalog.text IS NULL OR s.subscriber OPERATOR(pg_catalog.=) $4)" \
	"    AND ($1::pg_catalog.text IS NULL OR e.kind::pg_catalog.text OPERATOR(pg_catalog.=) $1)" \
	"    AND ($2::pg_catalog.text IS NULL OR s.last_error OPERATOR(pg_catalog.~~) $2)" \
	"    AND ($3::pg_catalog.timestamptz IS NULL OR s.parked_at OPERATOR(pg_catalog.<) $3)" \
	"  ORDER BY s.event_id, s.subscriber FOR UPDATE OF s)" \
	" UPDATE %1$s.okno_delivery AS s SET parked_at = NULL, attempts = 0, available_at = NULL" \
	"  FROM picked WHERE s.subscriber OPERATOR(pg_catalog.=) picked.subscriber" \
	"   AND s.event_id OPERATOR(pg_catalog.=) picked.event_id" \
	"   AND s.bucket OPERATOR(pg_catalog.=) picked.bucket" in("s")
#define ONE_SERVER(e) ""
#define SHARD_BUCKETS(e) " AND " e ".bucket OPERATOR(pg_catalog.=) ANY ($5)"
static OknoPlan delivery_requeue_parked = {
	.sql = SQL_DELIVERY_REQUEUE_PARKED(ONE_SERVER),
	.nargs = 4,
	.argtypes = {TEXTOID, TEXTOID, TIMESTAMPTZOID, TEXTOID}
};

/* of one shard's buckets ($5), as bucket_requeue_parked */
static OknoPlan named_bucket_requeue_parked = {
	.sql = SQL_DELIVERY_REQUEUE_PARKED(SHARD_BUCKETS),
	.nargs = 5,
	.argtypes = {TEXTOID, TEXTOID, TIMESTAMPTZOID, TEXTOID, INT4ARRAYOID},
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
};

/*
 * The row of an event that subscriber $2 was handed as its drain copied it
 * (and so has none), as that drain would have written it: delivered.
 * Nothing for an event the subscriber has not copied, one from before the
 * subscription, or while its snapshot is of another cluster ($3: this
 * cluster's system identifier; the next drain copies again what it must).
 * The subscriber's row is locked (FOR KEY SHARE) so that okno_unsubscribe
 * waits for this transaction and then removes the row written here; a
 * drain's lock of it (FOR NO KEY UPDATE) does not make this wait.
 */
#define SQL_DELIVERED_ROW(F) \
	"INSERT INTO %1$s.okno_delivery (subscriber, event_id, " F##_DELIVERY_KEY ", first, delivered_at)" \
	" SELECT u.name, e.id, " F##_STORED_KEY("e") "," \
	"        e.kind OPERATOR(pg_catalog.=) 'booking_created', pg_catalog.clock_timestamp()" \
	"   FROM %1$s.okno_subscriber AS u, %1$s.outbox AS e" \
	"  WHERE u.name OPERATOR(pg_catalog.=) $2 AND e.id OPERATOR(pg_catalog.=) $1" \
	"    AND u.copied_system OPERATOR(pg_catalog.=) $3" \
	"    AND e.created_at OPERATOR(pg_catalog.>=) u.since" \
	"    AND (e.created_xid IS NULL" \
	"         OR pg_catalog.pg_visible_in_snapshot(e.created_xid, u.copied_snapshot))" \
	"    FOR KEY SHARE OF u" \
	" ON CONFLICT DO NOTHING"

static OknoPlan delivered_row_plan = {
	OKNO_PLAN_FORMS(SQL_DELIVERED_ROW),
	.nargs = 3,
	.argtypes = {UUIDOID, TEXTOID, INT8OID}
};

/*
 * Write the row of event id that subscriber was handed without one (see
 * delivered_row_plan); true if it did.
 */
static bool
write_delivered_row(Datum id, Datum subscriber)
{
	Datum		values[3];
	int			rc;

	values[0] = id;
	values[1] = subscriber;
	values[2] = Int64GetDatum((int64) GetSystemIdentifier());
	rc = SPI_execute_plan(okno_plan(&delivered_row_plan), values, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_INSERT, "subscriber delivery row");
	return SPI_processed == 1;
}

/* the default subscriber's drain takes no name */
static uint64
drain_outbox(ReturnSetInfo *rsinfo, const char *subscriber pg_attribute_unused(),
			 int32 max_events, int ncols)
{
	return okno_drain_outbox(rsinfo, max_events, ncols);
}

/*
 * where Citus distributes outbox by bucket, shard by shard, or keeps it in
 * one shard (drain_buckets.c)
 */
static uint64
drain_buckets(ReturnSetInfo *rsinfo, const char *subscriber pg_attribute_unused(),
			  int32 max_events, int ncols)
{
	return okno_drain_buckets(rsinfo, max_events, ncols);
}

/*
 * A named subscriber's drain where Citus has the subscribers: shard by
 * shard, as the default one's (drain_buckets.c)
 */
static uint64
drain_named_buckets(ReturnSetInfo *rsinfo, const char *subscriber, int32 max_events,
					int ncols)
{
	return okno_drain_named_buckets(rsinfo, subscriber, max_events, ncols);
}

/*
 * The bucket of event id, for the bucket routines' statements; an
 * event that does not exist is looked for in bucket 0, where it is not
 * either.
 */
static Datum
route_bucket(Datum id)
{
	bool		isnull;
	Datum		bucket;
	int			rc;

	rc = SPI_execute_plan(okno_plan(&bucket_of_event), &id, NULL, true, 1);
	okno_check_spi(rc, SPI_OK_SELECT, "event's bucket");
	if (SPI_processed == 0)
		return Int32GetDatum(0);
	bucket = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? Int32GetDatum(0) : bucket;
}

/* the default subscriber's statements but its drain */
#define OUTBOX_STATEMENTS \
	.lock = &outbox_lock, \
	.fail = {&outbox_fail_row, &outbox_fail_columns, &outbox_fail_delivery}, \
	.release = &outbox_release, \
	.requeue = &outbox_requeue, \
	.requeue_parked = &outbox_requeue_parked, \
	.discard_lock = &outbox_discard_lock, \
	.discard_done = &outbox_discard_done, \
	.next_due = &outbox_next_due

const OknoDeliveryRoutine okno_default_routine = {
	.table = OUTBOX_TABLE,
	.drain = drain_outbox,
	.adopt = NULL,
	OUTBOX_STATEMENTS
};

/*
 * Where Citus keeps outbox in one shard (schema mode): the default one's
 * statements, which Citus plans onto the shard's node as they are, but for
 * the drain, drain_buckets.c's (the time given, planned for each call)
 */
const OknoDeliveryRoutine okno_one_shard_routine = {
	.table = OUTBOX_TABLE,
	.drain = drain_buckets,
	.adopt = NULL,
	OUTBOX_STATEMENTS
};

const OknoDeliveryRoutine okno_bucket_routine = {
	.table = OUTBOX_TABLE,
	.drain = drain_buckets,
	.adopt = NULL,
	.route = route_bucket,
	.lock = &bucket_lock,
	.fail = {&bucket_fail_row, &bucket_fail_columns, &bucket_fail_delivery},
	.release = &bucket_release,
	.requeue = &bucket_requeue,
	.requeue_parked = &bucket_requeue_parked,	/* per shard */
	.discard_lock = &bucket_discard_lock,
	.discard_done = &bucket_discard_done,
	.next_due = &outbox_next_due
};

/*
 * Where Citus has the named subscribers: their statements with the event's
 * bucket as $7 (route_last); no adopting, as every row is written with its
 * event (outbox/fan_out.c)
 */
const OknoDeliveryRoutine okno_named_bucket_routine = {
	.table = NAMED_BUCKET_TABLE,
	.drain = drain_named_buckets,
	.adopt = NULL,
	.route = route_bucket,
	.route_last = true,
	.lock = &named_bucket_lock,
	.fail = {NULL, NULL, &named_bucket_fail},
	.release = &named_bucket_release,
	.requeue = &named_bucket_requeue,
	.requeue_parked = &named_bucket_requeue_parked,	/* per shard */
	.discard_lock = &named_bucket_discard_lock,
	.discard_done = &named_bucket_discard_done,
	.next_due = &delivery_next_due
};

const OknoDeliveryRoutine okno_named_routine = {
	.table = DELIVERY_TABLE,
	.drain = okno_drain_subscriber,
	.adopt = write_delivered_row,
	.lock = &delivery_lock,
	.fail = {NULL, NULL, &delivery_fail},
	.release = &delivery_release,
	.requeue = &delivery_requeue,
	.requeue_parked = &delivery_requeue_parked,
	.discard_lock = &delivery_discard_lock,
	.discard_done = &delivery_discard_done,
	.next_due = &delivery_next_due
};

/*
 * The routines of the subscriber a verb was called for (NULL: the default
 * one), and, unless arg is NULL, the subscriber argument of their
 * statements in *arg and *argnull.
 */
const OknoDeliveryRoutine *
okno_delivery_routine(const char *subscriber, Datum *arg, char *argnull)
{
	if (arg != NULL)
	{
		*arg = subscriber != NULL ? CStringGetTextDatum(subscriber) : (Datum) 0;
		*argnull = subscriber != NULL ? ' ' : 'n';
	}
	if (subscriber != NULL)
		return okno_named_on_citus() ? &okno_named_bucket_routine : &okno_named_routine;
	if (okno_binding()->outbox_buckets)
		return &okno_bucket_routine;
	if (okno_binding()->outbox_one_shard)
		return &okno_one_shard_routine;
	return &okno_default_routine;
}

/*
 * Run statement plan of routine r (one of its per-event ones) with the
 * nvalues values and nulls, expecting SPI code expected; the rows it
 * processed.  With adopt, an event the subscriber was handed as its drain
 * copied it, which has no row of its own yet, gets one (delivered) and the
 * statement runs again.  The caller is connected to SPI.
 */
uint64
okno_delivery_exec(const OknoDeliveryRoutine *r, OknoPlan *plan, Datum *values,
				   const char *nulls, int nvalues, bool adopt, int expected,
				   const char *what)
{
	int			rc;
	Datum		routed[8];
	char		routed_nulls[8];

	/*
	 * the event's bucket as $2, or as the last argument after NULLs (a copy
	 * of the arguments: the caller's stay)
	 */
	if (r->route != NULL)
	{
		Assert(plan->nargs <= (int) lengthof(routed) && nvalues <= plan->nargs);
		memset(routed_nulls, 'n', sizeof(routed_nulls));
		memset(routed, 0, sizeof(routed));
		memcpy(routed, values, nvalues * sizeof(Datum));
		if (nulls != NULL)
			memcpy(routed_nulls, nulls, nvalues);
		else
			memset(routed_nulls, ' ', nvalues);
		routed[r->route_last ? plan->nargs - 1 : 1] = r->route(values[0]);
		routed_nulls[r->route_last ? plan->nargs - 1 : 1] = ' ';
		values = routed;
		nulls = routed_nulls;
	}
	rc = SPI_execute_plan(okno_plan(plan), values, nulls, false, 0);
	okno_check_spi(rc, expected, what);
	if (SPI_processed == 0 && adopt && r->adopt != NULL && r->adopt(values[0], values[1]))
	{
		rc = SPI_execute_plan(okno_plan(plan), values, nulls, false, 0);
		okno_check_spi(rc, expected, what);
	}
	return SPI_processed;
}
