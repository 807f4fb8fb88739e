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

#include "okno.h"

#define OKNO_DRAIN_MAX	10000

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
	"      AND (p.available_at IS NULL"
	"           OR p.available_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp())"
	"    ORDER BY p.id LIMIT $1 FOR UPDATE SKIP LOCKED))"
	"  RETURNING o.id, o.kind::pg_catalog.text AS kind, o.payload, o.attempts)"
	" SELECT id, kind, payload, attempts FROM delivered ORDER BY id",
	.nargs = 1,
	.argtypes = {INT4OID}
};

/*
 * Run plan (with max_events as its argument, if it takes one) and put the
 * first ncols columns of each row into the function's result set.
 */
static void
drain_into(FunctionCallInfo fcinfo, OknoPlan *plan, int32 max_events, int ncols)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		arg = Int32GetDatum(max_events);
	int			rc;
	uint64		i;

	InitMaterializedSRF(fcinfo, 0);

	okno_spi_connect();

	rc = SPI_execute_plan(okno_plan(plan), plan->nargs > 0 ? &arg : NULL, NULL, false, 0);
	if (rc != SPI_OK_SELECT && rc != SPI_OK_UPDATE_RETURNING)
		okno_check_spi(rc, SPI_OK_SELECT, "outbox drain");

	for (i = 0; i < SPI_processed; i++)
	{
		Datum		values[4];
		bool		nulls[4];
		int			col;

		for (col = 0; col < ncols; col++)
			values[col] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
										col + 1, &nulls[col]);
		/* tuplestore_putvalues copies into the tuplestore's own context */
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
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
	PreventCommandIfReadOnly("okno_drain_once()");
	drain_into(fcinfo, &drain_one_0_1_plan, 1, 3);
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
	drain_into(fcinfo, &drain_plan, 1, 3);
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
	drain_into(fcinfo, &drain_plan, max_events, 4);
	return (Datum) 0;
}
