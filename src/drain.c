/*-------------------------------------------------------------------------
 *
 * drain.c
 *	  okno_drain_once(): hand one pending event to the caller.
 *
 * In the caller's transaction, the first pending outbox row by id is
 * locked with FOR UPDATE SKIP LOCKED, marked delivered_at =
 * clock_timestamp() and returned.  The caller's transaction is the
 * delivery: if it rolls back, the event is pending again and a later drain
 * hands it out again (at least once, never exactly once).  While the first
 * taker's transaction is open, other drainers skip the row and take the
 * next one.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/tuplestore.h"

#include "okno.h"

PG_FUNCTION_INFO_V1(okno_drain_once);

static OknoPlan drain_one_plan = {
	.sql =
	"UPDATE %1$s.outbox AS o SET delivered_at = pg_catalog.clock_timestamp()"
	" WHERE o.id OPERATOR(pg_catalog.=)"
	" (SELECT p.id FROM %1$s.outbox AS p WHERE p.delivered_at IS NULL"
	"  ORDER BY p.id LIMIT 1 FOR UPDATE SKIP LOCKED)"
	" RETURNING o.id, o.kind::pg_catalog.text, o.payload"
};

/*
 * okno_drain_once() RETURNS TABLE(event_id uuid, kind text, payload jsonb)
 */
Datum
okno_drain_once(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			rc;
	uint64		i;

	PreventCommandIfReadOnly("okno_drain_once()");
	InitMaterializedSRF(fcinfo, 0);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	rc = SPI_execute_plan(okno_plan(&drain_one_plan), NULL, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_UPDATE_RETURNING, "outbox drain");

	for (i = 0; i < SPI_processed; i++)
	{
		Datum		values[3];
		bool		nulls[3];
		int			col;

		for (col = 0; col < 3; col++)
			values[col] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
										col + 1, &nulls[col]);
		/* tuplestore_putvalues copies into the tuplestore's own context */
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");

	return (Datum) 0;
}
