/*-------------------------------------------------------------------------
 *
 * drain.c
 *	  Hand pending events to the caller: okno_drain_once(), okno_drain(n).
 *
 * In the caller's transaction, the first due outbox rows by id are locked
 * with FOR UPDATE SKIP LOCKED, marked delivered_at = clock_timestamp() and
 * returned in id order.  Due means: not delivered, not parked, and
 * available_at (set by okno_record_failure's backoff) unset or past.  The
 * caller's transaction is the delivery: if it rolls back, the events are
 * pending again and a later drain hands them out again (at least once,
 * never exactly once).  While the first taker's transaction is open, other
 * drainers skip its rows and take the next ones.
 *
 * The pick runs on the partial index outbox_pending (pending, not parked
 * events only), and the update finds the picked rows by primary key
 * (= ANY of their ids), so neither depends on how many delivered rows the
 * table holds.
 *
 * Delivered events leave dead entries at the front of outbox_pending until
 * VACUUM removes them (ids grow, so nothing else ever cleans that end of the
 * index), and a scan from the start walks them all: with a million of them
 * a drain takes milliseconds instead of microseconds.  So each backend
 * keeps a cursor, the last id it handed out, and starts its next scan after
 * it.  Events that become due again behind the cursor (a drain that rolled
 * back in another session, a release, a requeue, a retry coming due) are
 * found by a scan from the start, which happens when the scan from the
 * cursor finds nothing, at least every five seconds, after this backend's own
 * transaction (or subtransaction) aborts, and after this backend released,
 * requeued or recorded a failure of an event.  The order of a batch is
 * always by id; across calls it is by id from the cursor.
 *
 * okno 0.1.0's SQL function okno_drain_once() is bound to the C symbol
 * okno_drain_once, which keeps 0.1.0's query (its table has no retry
 * columns); 0.2.0 binds okno_drain_once() to okno_drain_once_0_2.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/tuplestore.h"

#include "access/xact.h"
#include "utils/timestamp.h"

#include "okno.h"

#define OKNO_DRAIN_MAX	10000

/* a scan from the start of the pending index at least this often (5 s) */
#define OKNO_DRAIN_RESCAN_US	((int64) 5000000)

static pg_uuid_t drain_cursor;		/* the last id this backend handed out */
static bool drain_cursor_valid = false;
static TimestampTz drain_last_full_scan = 0;

PG_FUNCTION_INFO_V1(okno_drain_once);
PG_FUNCTION_INFO_V1(okno_drain_once_0_2);
PG_FUNCTION_INFO_V1(okno_drain);

/* okno 0.1.0: the outbox has no attempts, available_at or parked_at */
static OknoPlan drain_one_0_1_plan = {
	.sql =
	"UPDATE %1$s.outbox AS o SET delivered_at = pg_catalog.clock_timestamp()"
	" WHERE o.id OPERATOR(pg_catalog.=)"
	" (SELECT p.id FROM %1$s.outbox AS p WHERE p.delivered_at IS NULL"
	"  ORDER BY p.id LIMIT 1 FOR UPDATE SKIP LOCKED)"
	" RETURNING o.id, o.kind::pg_catalog.text, o.payload"
};

static OknoPlan drain_plan = {
	.sql =
	"WITH delivered AS ("
	" UPDATE %1$s.outbox AS o SET delivered_at = pg_catalog.clock_timestamp()"
	"  WHERE o.id OPERATOR(pg_catalog.=) ANY (ARRAY("
	"   SELECT p.id FROM %1$s.outbox AS p"
	"    WHERE p.delivered_at IS NULL AND p.parked_at IS NULL"
	"      AND p.id OPERATOR(pg_catalog.>) $2"
	"      AND (p.available_at IS NULL"
	"           OR p.available_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp())"
	"    ORDER BY p.id LIMIT $1 FOR UPDATE SKIP LOCKED))"
	"  RETURNING o.id, o.kind::pg_catalog.text AS kind, o.payload, o.attempts)"
	" SELECT id, kind, payload, attempts FROM delivered ORDER BY id",
	.nargs = 2,
	.argtypes = {INT4OID, UUIDOID}
};

/*
 * This backend made an event due again (okno_release, okno_requeue,
 * okno_record_failure): it may lie behind the cursor, so start the next
 * scan from the beginning.
 */
void
okno_drain_forget_cursor(void)
{
	drain_cursor_valid = false;
}

/*
 * After an abort, events this backend drained are due again behind its
 * cursor: start the next scan from the beginning.
 */
void
okno_drain_xact_callback(XactEvent event, void *arg pg_attribute_unused())
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		drain_cursor_valid = false;
}

void
okno_drain_subxact_callback(SubXactEvent event,
							SubTransactionId mySubid pg_attribute_unused(),
							SubTransactionId parentSubid pg_attribute_unused(),
							void *arg pg_attribute_unused())
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		drain_cursor_valid = false;
}

/*
 * Run plan with max_events (and, for drain_plan, the lower bound) and put
 * the first ncols columns of each row into the result set; return the
 * number of rows and remember the last id.
 */
static uint64
run_drain(ReturnSetInfo *rsinfo, OknoPlan *plan, int32 max_events,
		  pg_uuid_t *lower, int ncols)
{
	Datum		args[2];
	int			rc;
	uint64		i;
	uint64		n;

	args[0] = Int32GetDatum(max_events);
	args[1] = UUIDPGetDatum(lower);
	rc = SPI_execute_plan(okno_plan(plan), args, NULL, false, 0);
	if (rc != SPI_OK_SELECT && rc != SPI_OK_UPDATE_RETURNING)
		okno_check_spi(rc, SPI_OK_SELECT, "outbox drain");

	n = SPI_processed;
	for (i = 0; i < n; i++)
	{
		Datum		values[4];
		bool		nulls[4];
		int			col;

		CHECK_FOR_INTERRUPTS();
		for (col = 0; col < ncols; col++)
			values[col] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
										col + 1, &nulls[col]);
		/* tuplestore_putvalues copies into the tuplestore's own context */
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		if (i == n - 1 && !nulls[0])
		{
			memcpy(&drain_cursor, DatumGetUUIDP(values[0]), sizeof(pg_uuid_t));
			drain_cursor_valid = true;
		}
	}
	return n;
}

/*
 * Drain up to max_events due events into the function's result set: from
 * this backend's cursor when it has one and the last scan from the start
 * is recent, otherwise (or when that finds nothing) from the start.
 */
static void
drain_due(FunctionCallInfo fcinfo, int32 max_events, int ncols)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	pg_uuid_t	start;
	TimestampTz now = GetCurrentTimestamp();
	bool		from_cursor;

	InitMaterializedSRF(fcinfo, 0);
	memset(&start, 0, sizeof(start));	/* the nil UUID: below every id */

	okno_spi_connect();
	from_cursor = drain_cursor_valid &&
		now - drain_last_full_scan < OKNO_DRAIN_RESCAN_US;
	if (!from_cursor ||
		run_drain(rsinfo, &drain_plan, max_events, &drain_cursor, ncols) == 0)
	{
		(void) run_drain(rsinfo, &drain_plan, max_events, &start, ncols);
		drain_last_full_scan = now;
	}
	okno_spi_finish();
}

/*
 * okno_drain_once() RETURNS TABLE(event_id uuid, kind text, payload jsonb),
 * as okno 0.1.0 defined it.
 */
Datum
okno_drain_once(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	pg_uuid_t	unused;

	PreventCommandIfReadOnly("okno_drain_once()");
	InitMaterializedSRF(fcinfo, 0);
	memset(&unused, 0, sizeof(unused));
	okno_spi_connect();
	(void) run_drain(rsinfo, &drain_one_0_1_plan, 1, &unused, 3);
	okno_spi_finish();
	return (Datum) 0;
}

/*
 * okno_drain_once() RETURNS TABLE(event_id uuid, kind text, payload jsonb),
 * skipping parked and delayed events (okno 0.2.0).
 */
Datum
okno_drain_once_0_2(PG_FUNCTION_ARGS)
{
	PreventCommandIfReadOnly("okno_drain_once()");
	drain_due(fcinfo, 1, 3);
	return (Datum) 0;
}

/*
 * okno_drain(max_events integer DEFAULT 100)
 *	 RETURNS TABLE(event_id uuid, kind text, payload jsonb, attempts integer)
 */
Datum
okno_drain(PG_FUNCTION_ARGS)
{
	int32		max_events;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_events must not be null"),
				 errhint("Pass a number of events from 1 to %d.", OKNO_DRAIN_MAX)));
	max_events = PG_GETARG_INT32(0);
	if (max_events < 1 || max_events > OKNO_DRAIN_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_events must be between 1 and %d", OKNO_DRAIN_MAX),
				 errdetail("The value given was %d.", max_events)));

	PreventCommandIfReadOnly("okno_drain()");
	drain_due(fcinfo, max_events, 4);
	return (Datum) 0;
}
