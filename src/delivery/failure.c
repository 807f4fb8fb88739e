/*-------------------------------------------------------------------------
 *
 * failure.c
 *	  A recipient that fails: okno_record_failure, okno_release,
 *	  okno_requeue.
 *
 * okno_record_failure(event_id, error) says "this delivery failed": the
 * event is pending again (delivered_at = NULL) with one more attempt, the
 * error text, and available_at = now + backoff; when the attempts reach
 * okno.max_attempts it is parked instead and the drains skip it.  It works
 * in the transaction that drained the event (a relay records the failures
 * of a batch and commits the rest of the batch as delivered) and in a later
 * one (after the delivery transaction rolled back).
 *
 * Backoff: d = min(okno.retry_cap, okno.retry_base * 2^(attempts - 1)),
 * and the delay is d/2 plus a random part of up to d/2 ("equal jitter"),
 * so retries of many events spread out but never come sooner than d/2.
 *
 * okno_release(event_id) hands back an event the caller drained but did not
 * get to deliver (a relay stopping in the middle of a batch): pending
 * again, attempts unchanged.  okno_requeue(event_id) unparks an event:
 * attempts reset to 0, available at once.  Both send NOTIFY okno_outbox
 * (at commit) when they made an event due, so a waiting relay takes it at
 * once instead of at its next poll.
 *
 * Each has a form with a subscriber argument that works on that subscriber's
 * delivery state instead ("default": the same as the form without it),
 * through its routines (routine.c).  An event that a named
 * subscriber's drain handed out as it copied it has no row of its own
 * (drain_subscriber.c): okno_record_failure and okno_release write it
 * first, as delivered (the routines' adopt).
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "common/pg_prng.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/guc.h"
#include "utils/uuid.h"

#include "base/base.h"
#include "outbox/outbox.h"
#include "delivery/delivery.h"


/* GUCs: retries of failed deliveries */
static int	retry_base_ms = 1000;
static int	retry_cap_ms = 3600000;
static int	max_attempts = 10;

/* last_error keeps at most this many bytes (cut at a character boundary) */
#define OKNO_LAST_ERROR_MAXLEN 2000

PG_FUNCTION_INFO_V1(okno_record_failure);
PG_FUNCTION_INFO_V1(okno_record_failure_0_6);
PG_FUNCTION_INFO_V1(okno_release);
PG_FUNCTION_INFO_V1(okno_requeue);

/*
 * Define the retry settings.
 */
void
okno_failure_init(void)
{
	DefineCustomIntVariable("okno.retry_base",
							"Delay before the first retry of a failed delivery.",
							"Each further failure doubles the delay, up to okno.retry_cap; "
							"a random half of it is jitter.",
							&retry_base_ms,
							1000, 1, 86400000,
							PGC_USERSET, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("okno.retry_cap",
							"Longest delay between retries of a failed delivery.",
							NULL,
							&retry_cap_ms,
							3600000, 1, INT_MAX,
							PGC_USERSET, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("okno.max_attempts",
							"Failed deliveries after which an event is parked.",
							"A parked event is not handed out again until okno_requeue().",
							&max_attempts,
							10, 1, 1000,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
}

/*
 * The delay before retry number attempts + 1, in microseconds.
 */
static int64
retry_delay_us(int32 attempts)
{
	double		d;

	/* 2^(attempts - 1) overflows nothing that matters: the cap bounds it */
	d = (double) retry_base_ms * pow(2.0, (double) Min(attempts - 1, 60));
	if (d > (double) retry_cap_ms)
		d = (double) retry_cap_ms;
	d = d / 2.0 + pg_prng_double(&pg_global_prng_state) * (d / 2.0);
	return (int64) (d * 1000.0);
}

static pg_uuid_t *
event_id_arg(FunctionCallInfo fcinfo, const char *fname)
{
	okno_require_arg(fcinfo, 0, "event_id", ERRCODE_NULL_VALUE_NOT_ALLOWED,
					 "Pass the event_id a drain function returned to %s.", fname);
	return PG_GETARG_UUID_P(0);
}

/*
 * okno_record_failure(event_id uuid, error text) RETURNS outbox
 *	 (an okno installed at 0.5.0 or before)
 * okno_record_failure(event_id uuid, error text, OUT id uuid, ...)
 *	 RETURNS record (0.6.0 and later: okno_record_failure_0_6)
 * okno_record_failure(event_id uuid, error text, subscriber text)
 *	 RETURNS okno_delivery
 *
 * The event's delivery state as it is after the update.  Unknown event, or
 * one the subscriber has not been handed: event_missing.
 */
static Datum record_failure(FunctionCallInfo fcinfo, OknoFailForm form);

Datum
okno_record_failure(PG_FUNCTION_ARGS)
{
	return record_failure(fcinfo, PG_NARGS() > 2 ? OKNO_FAIL_DELIVERY : OKNO_FAIL_ROW);
}

Datum
okno_record_failure_0_6(PG_FUNCTION_ARGS)
{
	return record_failure(fcinfo, OKNO_FAIL_COLUMNS);
}

/*
 * The next state of an event that failed again after attempts, with error
 * (at most OKNO_LAST_ERROR_MAXLEN bytes of it): values and nulls [2..5] of
 * the routines' fail statement.  Parked once the attempts reach
 * okno.max_attempts (or if it was parked already: it keeps its parked_at),
 * else due again after the backoff, and waiting relays learn when.
 */
static void
next_failed_state(int32 attempts, bool parked, text *error, Datum *values, char *nulls)
{
	char	   *errstr = VARDATA_ANY(error);
	int			errlen;
	TimestampTz now = GetCurrentTimestamp();

	errlen = pg_mbcliplen(errstr, VARSIZE_ANY_EXHDR(error), OKNO_LAST_ERROR_MAXLEN);
	if (attempts < PG_INT32_MAX)
		attempts++;
	values[2] = Int32GetDatum(attempts);
	values[3] = PointerGetDatum(cstring_to_text_with_len(errstr, errlen));
	if (parked || attempts >= max_attempts)
	{
		nulls[4] = 'n';
		values[5] = TimestampTzGetDatum(now);
	}
	else
	{
		values[4] = TimestampTzGetDatum(now + retry_delay_us(attempts));
		nulls[5] = 'n';
		okno_wake_at_commit();
	}
}

/*
 * The fail statement's one row as the function's result, in the caller's
 * memory context cxt: the value of its one column (a row), or its columns
 * as a tuple of desc, each attribute of desc taken from the column of its
 * name (none: NULL).
 */
static Datum
failure_result(TupleDesc desc, MemoryContext cxt)
{
	HeapTuple	row = SPI_tuptable->vals[0];
	TupleDesc	rowdesc = SPI_tuptable->tupdesc;
	MemoryContext oldcxt;
	Datum		result;
	bool		isnull;
	Datum	   *cols;
	bool	   *colnulls;
	int			i;

	if (rowdesc->natts == 1)
	{
		result = SPI_getbinval(row, rowdesc, 1, &isnull);
		if (isnull)
			elog(ERROR, "outbox failure update returned no row");
		return SPI_datumTransfer(result, false, -1);
	}
	oldcxt = MemoryContextSwitchTo(cxt);
	cols = palloc(desc->natts * sizeof(Datum));
	colnulls = palloc(desc->natts * sizeof(bool));
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		int			col = att->attisdropped ? SPI_ERROR_NOATTRIBUTE :
			SPI_fnumber(rowdesc, NameStr(att->attname));

		colnulls[i] = true;
		cols[i] = (Datum) 0;
		if (col > 0)
		{
			if (TupleDescAttr(rowdesc, col - 1)->atttypid != att->atttypid)
				elog(ERROR, "outbox failure update returned column \"%s\" of another type",
					 NameStr(att->attname));
			cols[i] = SPI_getbinval(row, rowdesc, col, &colnulls[i]);
		}
	}
	result = HeapTupleGetDatum(heap_form_tuple(desc, cols, colnulls));
	MemoryContextSwitchTo(oldcxt);
	return result;
}

static Datum
record_failure(FunctionCallInfo fcinfo, OknoFailForm form)
{
	pg_uuid_t  *id = event_id_arg(fcinfo, "okno_record_failure()");
	const OknoDeliveryRoutine *r;
	text	   *error;
	Datum		values[6];
	char		nulls[6];
	bool		isnull;
	Datum		result;
	OknoGuard	guard;
	MemoryContext cxt = CurrentMemoryContext;
	TupleDesc	desc = NULL;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "okno_record_failure() must return a composite type");
	desc = BlessTupleDesc(desc);
	okno_require_arg(fcinfo, 1, "error", ERRCODE_NULL_VALUE_NOT_ALLOWED,
					 "Describe the failure, for example \"exit status 1\".");
	error = PG_GETARG_TEXT_PP(1);

	PreventCommandIfReadOnly("okno_record_failure()");

	okno_guard_begin(&guard);
	okno_spi_connect();
	memset(nulls, ' ', sizeof(nulls));
	values[0] = UUIDPGetDatum(id);
	r = okno_delivery_routine(PG_NARGS() > 2 ?
							  okno_subscriber_of(fcinfo, 2, "okno_record_failure()") : NULL,
							  &values[1], &nulls[1]);
	if (okno_delivery_exec(r, r->lock, values, nulls, 2, true, SPI_OK_SELECT,
						   "outbox event lock") == 0)
		okno_error_event_missing(DatumGetCString(DirectFunctionCall1(uuid_out,
																	 UUIDPGetDatum(id))));
	next_failed_state(DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0],
												  SPI_tuptable->tupdesc, 1, &isnull)),
					  DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0],
												 SPI_tuptable->tupdesc, 2, &isnull)),
					  error, values, nulls);
	Assert(r->fail[form] != NULL);
	if (okno_delivery_exec(r, r->fail[form], values, nulls, 6, false,
						   SPI_OK_UPDATE_RETURNING, "outbox failure update") != 1)
		elog(ERROR, "outbox failure update changed " UINT64_FORMAT " rows", SPI_processed);
	result = failure_result(desc, cxt);
	okno_drain_forget_cursor();

	okno_spi_finish();
	okno_guard_end(&guard);

	PG_RETURN_DATUM(result);
}

/*
 * Release (or requeue) the event of argument 0, of the subscriber named by
 * argument 1 when the function has one; true if it changed the row.  A
 * release updates a delivered event, which for a named subscriber may have
 * no row yet (handed out as it was copied).
 */
static bool
update_event(FunctionCallInfo fcinfo, const char *fname, bool release)
{
	pg_uuid_t  *id = event_id_arg(fcinfo, fname);
	const OknoDeliveryRoutine *r;
	Datum		values[2];
	char		nulls[2];
	bool		changed;
	OknoGuard	guard;

	PreventCommandIfReadOnly(fname);
	okno_guard_begin(&guard);
	okno_spi_connect();
	values[0] = UUIDPGetDatum(id);
	nulls[0] = ' ';
	r = okno_delivery_routine(PG_NARGS() > 1 ? okno_subscriber_of(fcinfo, 1, fname) : NULL,
							  &values[1], &nulls[1]);
	changed = okno_delivery_exec(r, release ? r->release : r->requeue, values, nulls, 2,
								 release, SPI_OK_UPDATE,
								 release ? "outbox release" : "outbox requeue") > 0;
	okno_spi_finish();
	okno_guard_end(&guard);
	if (changed)
	{
		okno_notify();
		okno_drain_forget_cursor();
	}
	return changed;
}

/*
 * okno_release(event_id uuid) RETURNS boolean
 * okno_release(event_id uuid, subscriber text) RETURNS boolean
 *
 * False for an unknown event or one that is not delivered.
 */
Datum
okno_release(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(update_event(fcinfo, "okno_release()", true));
}

/*
 * okno_requeue(event_id uuid) RETURNS boolean
 * okno_requeue(event_id uuid, subscriber text) RETURNS boolean
 *
 * False for an unknown event or one already delivered.
 */
Datum
okno_requeue(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(update_event(fcinfo, "okno_requeue()", false));
}
