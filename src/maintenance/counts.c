/*-------------------------------------------------------------------------
 *
 * counts.c
 *	  okno_outbox_counts() and okno_subscriber_counts(): the rows of the
 *	  views okno_outbox_status and okno_subscribers.
 *
 * The views read the application's outbox, so they are views over these
 * functions rather than over the table: an extension script may not refer
 * to a table it does not own (pg_restore runs CREATE EXTENSION before it
 * creates the application's tables), and a view would read the table as
 * the view's owner, the bootstrap superuser.  These run as the caller, as
 * every call of okno's does (a superuser's as the tables' owner: owner.c),
 * after the tables are bound.
 *
 * Everything but "delivered" is counted exactly from the partial indexes
 * (undelivered events only), so the counts cost the same however many
 * delivered rows the table holds; "delivered" is estimated from the
 * cumulative statistics' live-row count.  pending = due_now + delayed +
 * held_back: held_back counts the events that wait for an earlier event of
 * their booking, whatever their own time.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "base/base.h"
#include "outbox/outbox.h"
#include "maintenance/maintenance.h"

PG_FUNCTION_INFO_V1(okno_outbox_counts);
PG_FUNCTION_INFO_V1(okno_subscriber_counts);

/*
 * The default subscriber's counts, one row; $1 is outbox's OID (for its
 * live-row count, the expression live).  q_in restricts the earlier events
 * looked for (where Citus distributes outbox by bucket: to the event's
 * own bucket, which holds its key's, so that Citus runs the count on each
 * shard).
 */
#define OUTBOX_COUNTS_SQL_IN(F, live, q_in) \
	"SELECT p.pending, p.due_now," \
	"       p.pending OPERATOR(pg_catalog.-) p.due_now OPERATOR(pg_catalog.-) p.held_back AS delayed," \
	"       k.parked," \
	"       GREATEST(0::pg_catalog.int8, " live \
	"           OPERATOR(pg_catalog.-) p.pending OPERATOR(pg_catalog.-) k.parked) AS delivered," \
	"       pg_catalog.now() OPERATOR(pg_catalog.-) p.oldest_pending AS oldest_pending_age," \
	"       pg_catalog.now() OPERATOR(pg_catalog.-) p.oldest_due AS oldest_due_age," \
	"       p.held_back" \
	"  FROM (SELECT pg_catalog.count(*) AS pending," \
	"               pg_catalog.count(*) FILTER (WHERE NOT o.held AND (o.available_at IS NULL" \
	"                   OR o.available_at OPERATOR(pg_catalog.<=) pg_catalog.now())) AS due_now," \
	"               pg_catalog.count(*) FILTER (WHERE o.held) AS held_back," \
	"               pg_catalog.min(o.created_at) AS oldest_pending," \
	"               pg_catalog.min(COALESCE(o.available_at, o.created_at))" \
	"                   FILTER (WHERE NOT o.held AND (o.available_at IS NULL" \
	"                   OR o.available_at OPERATOR(pg_catalog.<=) pg_catalog.now())) AS oldest_due" \
	"          FROM (SELECT e.created_at, e.available_at," \
	"                       e.kind OPERATOR(pg_catalog.<>) 'booking_created'" \
	"                       AND EXISTS (SELECT FROM %1$s.outbox AS q" \
	"                        WHERE " F##_ORDER_KEY("q") " OPERATOR(pg_catalog.=) " F##_ORDER_KEY("e") q_in \
	"                          AND q.delivered_at IS NULL AND q.id OPERATOR(pg_catalog.<>) e.id" \
	"                          AND" OKNO_SQL_EARLIER("q.id", "e.id") ") AS held" \
	"                  FROM %1$s.outbox AS e" \
	"                 WHERE e.delivered_at IS NULL AND e.parked_at IS NULL) AS o) AS p," \
	"       (SELECT pg_catalog.count(*) AS parked FROM %1$s.outbox AS o" \
	"         WHERE o.parked_at IS NOT NULL AND o.delivered_at IS NULL) AS k"
#define OUTBOX_LIVE_ROWS "pg_catalog.pg_stat_get_live_tuples($1)"
#define OUTBOX_COUNTS_SQL(F) OUTBOX_COUNTS_SQL_IN(F, OUTBOX_LIVE_ROWS, "")

static OknoPlan outbox_counts_plan = {
	OKNO_PLAN_FORMS(OUTBOX_COUNTS_SQL),
	.nargs = 1,
	.argtypes = {OIDOID}
};

/*
 * Where Citus distributes outbox by bucket: the held-back rule within the
 * bucket, and the live rows ($2) of the shards, counted first (the table
 * itself is an empty shell; run_command_on_shards reads each shard's count
 * where it lies).  Planned for each call: Citus cannot plan the counts
 * with the parameters left in.
 */
static OknoPlan shards_live_rows_plan = {
	.sql =
	"SELECT COALESCE(pg_catalog.sum(r.result::pg_catalog.int8), 0)::pg_catalog.int8"
	"  FROM pg_catalog.run_command_on_shards($1::pg_catalog.regclass,"
	"       'SELECT pg_catalog.pg_stat_get_live_tuples(''%%s''::pg_catalog.regclass)') AS r"
	" WHERE r.success",
	.nargs = 1,
	.argtypes = {OIDOID}
};

#define OUTBOX_COUNTS_BUCKETS_SQL \
	OUTBOX_COUNTS_SQL_IN(OKNO_F_CURRENT, "$2", \
						 " AND q." OKNO_OUTBOX_BUCKET_COLUMN " OPERATOR(pg_catalog.=) e." OKNO_OUTBOX_BUCKET_COLUMN)

static OknoPlan outbox_counts_buckets_plan = {
	.sql = OUTBOX_COUNTS_BUCKETS_SQL,
	.nargs = 2,
	.argtypes = {OIDOID, INT8OID},
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
};

/*
 * The same where Citus keeps outbox in one shard (schema mode): the
 * one-server counts, the live rows counted in the shard and passed in
 */
#define OUTBOX_COUNTS_ONE_SHARD_SQL(F) OUTBOX_COUNTS_SQL_IN(F, "$2", "")

static OknoPlan outbox_counts_one_shard_plan = {
	OKNO_PLAN_FORMS(OUTBOX_COUNTS_ONE_SHARD_SQL),
	.nargs = 2,
	.argtypes = {OIDOID, INT8OID},
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
};

/*
 * Every subscriber's counts, the default one first; not_copied counts the
 * events committed since its drains last looked (they are also in pending
 * and due_now).
 */
#define DEFAULT_SUBSCRIBER_COUNTS \
	" SELECT 'default'::pg_catalog.text AS subscriber, NULL::pg_catalog.timestamptz AS subscribed_at," \
	"        s.pending, s.due_now, s.delayed, s.parked, s.held_back, 0::pg_catalog.int8 AS not_copied," \
	"        s.oldest_pending_age, NULL::pg_catalog.timestamptz AS copied_at" \
	"   FROM s"
#define SUBSCRIBER_COUNTS_SQL(F) \
	"WITH s AS (" OUTBOX_COUNTS_SQL(F) ")" \
	" SELECT v.* FROM (" \
	DEFAULT_SUBSCRIBER_COUNTS \
	" UNION ALL" \
	" SELECT u.name, u.subscribed_at," \
	"        d.pending OPERATOR(pg_catalog.+) n.not_copied," \
	"        d.due_now OPERATOR(pg_catalog.+) n.not_copied," \
	"        d.pending OPERATOR(pg_catalog.-) d.due_now OPERATOR(pg_catalog.-) d.held_back," \
	"        d.parked, d.held_back, n.not_copied," \
	"        pg_catalog.now() OPERATOR(pg_catalog.-) LEAST(d.oldest, n.oldest)," \
	"        u.copied_at" \
	"   FROM %1$s.okno_subscriber AS u," \
	"        LATERAL (SELECT pg_catalog.count(*) FILTER (WHERE x.parked_at IS NULL) AS pending," \
	"                        pg_catalog.count(*) FILTER (WHERE x.parked_at IS NULL AND NOT x.held" \
	"                            AND (x.available_at IS NULL" \
	"                                 OR x.available_at OPERATOR(pg_catalog.<=) pg_catalog.now())) AS due_now," \
	"                        pg_catalog.count(*) FILTER (WHERE x.parked_at IS NULL AND x.held) AS held_back," \
	"                        pg_catalog.count(*) FILTER (WHERE x.parked_at IS NOT NULL) AS parked," \
	"                        pg_catalog.min(x.created_at) FILTER (WHERE x.parked_at IS NULL) AS oldest" \
	"                   FROM (SELECT e.created_at, p.available_at, p.parked_at," \
	"                                NOT p.first AND EXISTS (SELECT FROM %1$s.okno_delivery AS q" \
	"                                 WHERE q.subscriber OPERATOR(pg_catalog.=) p.subscriber" \
	"                                   AND q." F##_DELIVERY_KEY " OPERATOR(pg_catalog.=) p." F##_DELIVERY_KEY \
	"                                   AND q.delivered_at IS NULL" \
	"                                   AND q.event_id OPERATOR(pg_catalog.<>) p.event_id" \
	"                                   AND" OKNO_SQL_EARLIER("q.event_id", "p.event_id") ") AS held" \
	"                           FROM %1$s.okno_delivery AS p" \
	"                           JOIN %1$s.outbox AS e ON e.id OPERATOR(pg_catalog.=) p.event_id" \
	"                          WHERE p.subscriber OPERATOR(pg_catalog.=) u.name" \
	"                            AND p.delivered_at IS NULL) AS x) AS d," \
	"        LATERAL (SELECT pg_catalog.count(*) AS not_copied, pg_catalog.min(e.created_at) AS oldest" \
	"                   FROM %1$s.outbox AS e" \
	"                  WHERE e.created_xid OPERATOR(pg_catalog.>=) pg_catalog.pg_snapshot_xmin(u.copied_snapshot)" \
	"                    AND NOT pg_catalog.pg_visible_in_snapshot(e.created_xid, u.copied_snapshot)) AS n" \
	" ) AS v" \
	" ORDER BY v.subscriber OPERATOR(pg_catalog.<>) 'default', v.subscriber"

static OknoPlan subscriber_counts_plan = {
	OKNO_PLAN_FORMS(SUBSCRIBER_COUNTS_SQL),
	.nargs = 1,
	.argtypes = {OIDOID}
};

/* the same where Citus distributes outbox by bucket: the default one only */
static OknoPlan subscriber_counts_buckets_plan = {
	.sql = "WITH s AS (" OUTBOX_COUNTS_BUCKETS_SQL ")" DEFAULT_SUBSCRIBER_COUNTS,
	.nargs = 2,
	.argtypes = {OIDOID, INT8OID},
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
};

/*
 * The named subscribers' counts where Citus has them (outbox/fan_out.c:
 * every event's rows are written with it, so nothing is left to copy),
 * by name, after the default one's: the held-back probe within the row's
 * bucket, so that Citus runs it on each shard
 */
static OknoPlan named_counts_buckets_plan = {
	.sql =
	"SELECT u.name, u.subscribed_at,"
	"       COALESCE(d.pending, 0), COALESCE(d.due_now, 0),"
	"       COALESCE(d.pending OPERATOR(pg_catalog.-) d.due_now OPERATOR(pg_catalog.-) d.held_back, 0),"
	"       COALESCE(d.parked, 0), COALESCE(d.held_back, 0), 0::pg_catalog.int8,"
	"       pg_catalog.now() OPERATOR(pg_catalog.-) d.oldest, NULL::pg_catalog.timestamptz"
	"  FROM %1$s.okno_subscriber AS u"
	"  LEFT JOIN (SELECT x.subscriber,"
	"                    pg_catalog.count(*) FILTER (WHERE x.parked_at IS NULL) AS pending,"
	"                    pg_catalog.count(*) FILTER (WHERE x.parked_at IS NULL AND NOT x.held"
	"                        AND (x.available_at IS NULL"
	"                             OR x.available_at OPERATOR(pg_catalog.<=) pg_catalog.now())) AS due_now,"
	"                    pg_catalog.count(*) FILTER (WHERE x.parked_at IS NULL AND x.held) AS held_back,"
	"                    pg_catalog.count(*) FILTER (WHERE x.parked_at IS NOT NULL) AS parked,"
	"                    pg_catalog.min(x.created_at) FILTER (WHERE x.parked_at IS NULL) AS oldest"
	"               FROM (SELECT p.subscriber, e.created_at, p.available_at, p.parked_at,"
	"                            NOT p.first AND EXISTS (SELECT FROM %1$s.okno_delivery AS q"
	"                             WHERE q.bucket OPERATOR(pg_catalog.=) p.bucket"
	"                               AND q.subscriber OPERATOR(pg_catalog.=) p.subscriber"
	"                               AND q." OKNO_DELIVERY_KEY " OPERATOR(pg_catalog.=) p." OKNO_DELIVERY_KEY
	"                               AND q.delivered_at IS NULL"
	"                               AND q.event_id OPERATOR(pg_catalog.<>) p.event_id"
	"                               AND" OKNO_SQL_EARLIER("q.event_id", "p.event_id") ") AS held"
	"                       FROM %1$s.okno_delivery AS p"
	"                       JOIN %1$s.outbox AS e"
	"                         ON e." OKNO_OUTBOX_BUCKET_COLUMN " OPERATOR(pg_catalog.=) p.bucket"
	"                        AND e.id OPERATOR(pg_catalog.=) p.event_id"
	"                      WHERE p.delivered_at IS NULL) AS x"
	"              GROUP BY x.subscriber) AS d ON d.subscriber OPERATOR(pg_catalog.=) u.name"
	" ORDER BY u.name",
	.nargs = 0
};

#define SUBSCRIBER_COUNTS_ONE_SHARD_SQL(F) \
	"WITH s AS (" OUTBOX_COUNTS_ONE_SHARD_SQL(F) ")" DEFAULT_SUBSCRIBER_COUNTS

static OknoPlan subscriber_counts_one_shard_plan = {
	OKNO_PLAN_FORMS(SUBSCRIBER_COUNTS_ONE_SHARD_SQL),
	.nargs = 2,
	.argtypes = {OIDOID, INT8OID},
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
};

/*
 * Run one of the plans above: plan, or where Citus has outbox buckets_plan
 * (distributed by bucket) or one_shard_plan (in one shard), which take the
 * live rows of its shards, counted first (inside the counts' query Citus
 * returned garbage for them); the rows are in SPI_tuptable.  (The named
 * subscribers' counts on a cluster: named_counts_buckets_plan.)
 */
static void
run_counts(OknoPlan *plan, OknoPlan *buckets_plan, OknoPlan *one_shard_plan)
{
	const OknoBinding *b = okno_binding();
	Datum		args[2];
	int			rc;

	args[0] = ObjectIdGetDatum(okno_relid(OKNO_REL_OUTBOX));
	okno_require_outbox_buckets(b, "okno_outbox_status");
	if (b->outbox_buckets || b->outbox_one_shard)
	{
		bool		isnull;

		rc = SPI_execute_plan(okno_plan(&shards_live_rows_plan), args, NULL, true, 1);
		okno_check_spi(rc, SPI_OK_SELECT, "outbox live rows");
		args[1] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		plan = b->outbox_buckets ? buckets_plan : one_shard_plan;
	}

	rc = SPI_execute_plan(okno_plan(plan), args, NULL, true, 0);
	okno_check_spi(rc, SPI_OK_SELECT, "outbox counts");
}

/*
 * okno_outbox_counts(OUT pending bigint, ...) RETURNS record
 */
Datum
okno_outbox_counts(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext oldcxt;
	OknoGuard	guard;
	Datum	   *values;
	bool	   *nulls;
	HeapTuple	result;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "okno_outbox_counts() must return a composite type");
	desc = BlessTupleDesc(desc);

	okno_guard_begin(&guard);
	okno_spi_connect();
	run_counts(&outbox_counts_plan, &outbox_counts_buckets_plan, &outbox_counts_one_shard_plan);
	if (SPI_processed != 1 || SPI_tuptable->tupdesc->natts != desc->natts)
		elog(ERROR, "outbox counts returned " UINT64_FORMAT " rows", SPI_processed);
	oldcxt = MemoryContextSwitchTo(cxt);
	values = palloc(desc->natts * sizeof(Datum));
	nulls = palloc(desc->natts * sizeof(bool));
	heap_deform_tuple(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, values, nulls);
	/* (formed here: the values are copied out of SPI's memory) */
	result = heap_form_tuple(desc, values, nulls);
	MemoryContextSwitchTo(oldcxt);
	okno_spi_finish();
	okno_guard_end(&guard);

	PG_RETURN_DATUM(HeapTupleGetDatum(result));
}

/*
 * The rows of the last statement into rsinfo's result set, through values
 * and nulls (of its width)
 */
static void
put_rows(ReturnSetInfo *rsinfo, Datum *values, bool *nulls)
{
	uint64		i;

	if (SPI_tuptable->tupdesc->natts != rsinfo->setDesc->natts)
		elog(ERROR, "subscriber counts returned %d columns", SPI_tuptable->tupdesc->natts);
	for (i = 0; i < SPI_processed; i++)
	{
		heap_deform_tuple(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, values, nulls);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * okno_subscriber_counts(OUT subscriber text, ...) RETURNS SETOF record
 */
Datum
okno_subscriber_counts(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OknoGuard	guard;
	Datum	   *values;
	bool	   *nulls;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	values = palloc(rsinfo->setDesc->natts * sizeof(Datum));
	nulls = palloc(rsinfo->setDesc->natts * sizeof(bool));

	okno_guard_begin(&guard);
	okno_spi_connect();
	run_counts(&subscriber_counts_plan, &subscriber_counts_buckets_plan,
			   &subscriber_counts_one_shard_plan);
	put_rows(rsinfo, values, nulls);
	if (okno_binding()->outbox_buckets && okno_named_on_citus())
	{
		int			rc = SPI_execute_plan(okno_plan(&named_counts_buckets_plan), NULL, NULL,
										  true, 0);

		okno_check_spi(rc, SPI_OK_SELECT, "subscribers' counts");
		put_rows(rsinfo, values, nulls);
	}
	okno_spi_finish();
	okno_guard_end(&guard);

	return (Datum) 0;
}
