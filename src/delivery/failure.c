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
 * Each has a form with a subscriber argument (0.5.0) that works on that
 * subscriber's delivery state, okno_delivery, instead ("default": the same
 * as the form without it).  An event that the subscriber's drain handed out
 * as it copied it has no row there (drain_subscriber.c): okno_record_failure and
 * okno_release write it first, as delivered, when the subscriber has
 * copied the event (its snapshot sees the event's transaction finished, or
 * created_xid is cleared: every subscriber has) and the event began after
 * the subscription did (okno_subscriber.since).
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "common/pg_prng.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "utils/guc.h"

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

static OknoPlan lock_event_plan = {
	.sql =
	"SELECT attempts, parked_at IS NOT NULL FROM %1$s.outbox"
	" WHERE id OPERATOR(pg_catalog.=) $1 FOR UPDATE",
	.nargs = 1,
	.argtypes = {UUIDOID}
};

static OknoPlan record_failure_plan = {
	.sql =
	"UPDATE %1$s.outbox AS o SET delivered_at = NULL, attempts = $2, last_error = $3,"
	" available_at = $4, parked_at = COALESCE(o.parked_at, $5)"
	" WHERE o.id OPERATOR(pg_catalog.=) $1 RETURNING o",
	.nargs = 5,
	.argtypes = {UUIDOID, INT4OID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID}
};

/*
 * The same, returning okno's columns of the row (0.6.0's OUT parameters)
 * instead of the row of the application's table, whose other columns are
 * the application's
 */
static OknoPlan record_failure_columns_plan = {
	.sql =
	"UPDATE %1$s.outbox AS o SET delivered_at = NULL, attempts = $2, last_error = $3,"
	" available_at = $4, parked_at = COALESCE(o.parked_at, $5)"
	" WHERE o.id OPERATOR(pg_catalog.=) $1"
	" RETURNING o.id, o.kind::pg_catalog.text, o.payload, o.created_at, o.delivered_at,"
	" o.attempts, o.last_error, o.available_at, o.parked_at, o.created_xid",
	.nargs = 5,
	.argtypes = {UUIDOID, INT4OID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID}
};

static OknoPlan release_plan = {
	.sql =
	"UPDATE %1$s.outbox SET delivered_at = NULL"
	" WHERE id OPERATOR(pg_catalog.=) $1 AND delivered_at IS NOT NULL",
	.nargs = 1,
	.argtypes = {UUIDOID}
};

static OknoPlan requeue_plan = {
	.sql =
	"UPDATE %1$s.outbox SET parked_at = NULL, attempts = 0, available_at = NULL"
	" WHERE id OPERATOR(pg_catalog.=) $1 AND delivered_at IS NULL",
	.nargs = 1,
	.argtypes = {UUIDOID}
};

/* the same for a subscriber's delivery state ($6 or $2: the subscriber) */
static OknoPlan lock_delivery_plan = {
	.sql =
	"SELECT attempts, parked_at IS NOT NULL FROM %1$s.okno_delivery"
	" WHERE event_id OPERATOR(pg_catalog.=) $1 AND subscriber OPERATOR(pg_catalog.=) $2"
	" FOR UPDATE",
	.nargs = 2,
	.argtypes = {UUIDOID, TEXTOID}
};

static OknoPlan record_delivery_failure_plan = {
	.sql =
	"UPDATE %1$s.okno_delivery AS o SET delivered_at = NULL, attempts = $2, last_error = $3,"
	" available_at = $4, parked_at = COALESCE(o.parked_at, $5)"
	" WHERE o.event_id OPERATOR(pg_catalog.=) $1 AND o.subscriber OPERATOR(pg_catalog.=) $6"
	" RETURNING o",
	.nargs = 6,
	.argtypes = {UUIDOID, INT4OID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID}
};

static OknoPlan release_delivery_plan = {
	.sql =
	"UPDATE %1$s.okno_delivery SET delivered_at = NULL"
	" WHERE event_id OPERATOR(pg_catalog.=) $1 AND subscriber OPERATOR(pg_catalog.=) $2"
	" AND delivered_at IS NOT NULL",
	.nargs = 2,
	.argtypes = {UUIDOID, TEXTOID}
};

static OknoPlan requeue_delivery_plan = {
	.sql =
	"UPDATE %1$s.okno_delivery SET parked_at = NULL, attempts = 0, available_at = NULL"
	" WHERE event_id OPERATOR(pg_catalog.=) $1 AND subscriber OPERATOR(pg_catalog.=) $2"
	" AND delivered_at IS NULL",
	.nargs = 2,
	.argtypes = {UUIDOID, TEXTOID}
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
#define OKNO_SQL_DELIVERED_ROW(KEY, COL) \
	"INSERT INTO %1$s.okno_delivery (subscriber, event_id, " COL ", first, delivered_at)" \
	" SELECT u.name, e.id, " KEY("e") "," \
	"        e.kind OPERATOR(pg_catalog.=) 'booking_created', pg_catalog.clock_timestamp()" \
	"   FROM %1$s.okno_subscriber AS u, %1$s.outbox AS e" \
	"  WHERE u.name OPERATOR(pg_catalog.=) $2 AND e.id OPERATOR(pg_catalog.=) $1" \
	"    AND u.copied_system OPERATOR(pg_catalog.=) $3" \
	"    AND e.created_at OPERATOR(pg_catalog.>=) u.since" \
	"    AND (e.created_xid IS NULL" \
	"         OR pg_catalog.pg_visible_in_snapshot(e.created_xid, u.copied_snapshot))" \
	"    FOR KEY SHARE OF u" \
	" ON CONFLICT (subscriber, event_id) DO NOTHING"

static OknoPlan delivered_row_plan = {
	.sql = OKNO_SQL_DELIVERED_ROW(OKNO_SQL_ORDER_KEY, OKNO_DELIVERY_KEY),
	.sql_0_6 = OKNO_SQL_DELIVERED_ROW(OKNO_SQL_ORDER_KEY_0_6, OKNO_DELIVERY_KEY_0_6),
	.sql_unprepared = OKNO_SQL_DELIVERED_ROW(OKNO_SQL_ORDER_KEY_UNPREPARED, OKNO_DELIVERY_KEY),
	.nargs = 3,
	.argtypes = {UUIDOID, TEXTOID, INT8OID}
};

/*
 * Write the row of an event that subscriber was handed without one (see
 * delivered_row_plan); true if it did.
 */
static bool
write_delivered_row(pg_uuid_t *id, const char *subscriber)
{
	Datum		values[3];
	int			rc;

	values[0] = UUIDPGetDatum(id);
	values[1] = CStringGetTextDatum(subscriber);
	values[2] = Int64GetDatum((int64) GetSystemIdentifier());
	rc = SPI_execute_plan(okno_plan(&delivered_row_plan), values, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_INSERT, "subscriber delivery row");
	return SPI_processed == 1;
}

/*
 * The default subscriber's state of an event as a row of okno_delivery:
 * okno_record_failure's result when it is called with "default".
 */
#define OKNO_SQL_DEFAULT_AS_DELIVERY(KEY) \
	"SELECT ROW('default', o.id, " KEY("o") "," \
	" o.kind OPERATOR(pg_catalog.=) 'booking_created', o.delivered_at, o.attempts," \
	" o.last_error, o.available_at, o.parked_at)::%1$s.okno_delivery" \
	" FROM %1$s.outbox AS o WHERE o.id OPERATOR(pg_catalog.=) $1"

static OknoPlan default_as_delivery_plan = {
	.sql = OKNO_SQL_DEFAULT_AS_DELIVERY(OKNO_SQL_ORDER_KEY),
	.sql_0_6 = OKNO_SQL_DEFAULT_AS_DELIVERY(OKNO_SQL_ORDER_KEY_0_6),
	.sql_unprepared = OKNO_SQL_DEFAULT_AS_DELIVERY(OKNO_SQL_ORDER_KEY_UNPREPARED),
	.nargs = 1,
	.argtypes = {UUIDOID}
};

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
 * okno_record_failure(event_id uuid, error text) RETURNS outbox (to 0.5.0)
 * okno_record_failure(event_id uuid, error text, OUT id uuid, ...)
 *	 RETURNS record (0.6.0: okno_record_failure_0_6)
 * okno_record_failure(event_id uuid, error text, subscriber text)
 *	 RETURNS okno_delivery (0.5.0)
 *
 * The event's row (its delivery state) as it is after the update.  Unknown
 * event, or one the subscriber has not been handed: event_missing.
 */
static Datum record_failure(FunctionCallInfo fcinfo, bool columns);

Datum
okno_record_failure(PG_FUNCTION_ARGS)
{
	return record_failure(fcinfo, false);
}

Datum
okno_record_failure_0_6(PG_FUNCTION_ARGS)
{
	return record_failure(fcinfo, true);
}

static Datum
record_failure(FunctionCallInfo fcinfo, bool columns)
{
	pg_uuid_t  *id = event_id_arg(fcinfo, "okno_record_failure()");
	text	   *error;
	char	   *errstr;
	int			errlen;
	char	   *subscriber = NULL;
	Datum		values[6];
	char		nulls[6];
	int32		attempts;
	bool		parked;
	bool		isnull;
	TimestampTz now;
	int			rc;
	Datum		result;
	OknoGuard	guard;
	MemoryContext cxt = CurrentMemoryContext;
	TupleDesc	desc = NULL;

	if (columns)
	{
		if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
			elog(ERROR, "okno_record_failure() must return a composite type");
		desc = BlessTupleDesc(desc);
	}
	okno_require_arg(fcinfo, 1, "error", ERRCODE_NULL_VALUE_NOT_ALLOWED,
					 "Describe the failure, for example \"exit status 1\".");
	error = PG_GETARG_TEXT_PP(1);
	errstr = VARDATA_ANY(error);
	errlen = pg_mbcliplen(errstr, VARSIZE_ANY_EXHDR(error), OKNO_LAST_ERROR_MAXLEN);

	PreventCommandIfReadOnly("okno_record_failure()");

	okno_guard_begin(&guard);
	okno_spi_connect();
	if (PG_NARGS() > 2)
		subscriber = okno_subscriber_of(fcinfo, 2, "okno_record_failure()");

	memset(nulls, ' ', sizeof(nulls));
	values[0] = UUIDPGetDatum(id);
	if (subscriber != NULL)
	{
		values[1] = CStringGetTextDatum(subscriber);
		rc = SPI_execute_plan(okno_plan(&lock_delivery_plan), values, NULL, false, 1);
		okno_check_spi(rc, SPI_OK_SELECT, "outbox event lock");
		/* handed out as it was copied: no row yet */
		if (SPI_processed == 0 && write_delivered_row(id, subscriber))
			rc = SPI_execute_plan(okno_plan(&lock_delivery_plan), values, NULL, false, 1);
	}
	else
		rc = SPI_execute_plan(okno_plan(&lock_event_plan), values, NULL, false, 1);
	okno_check_spi(rc, SPI_OK_SELECT, "outbox event lock");
	if (SPI_processed == 0)
		okno_error_event_missing(DatumGetCString(DirectFunctionCall1(uuid_out,
																	 UUIDPGetDatum(id))));
	attempts = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
										   1, &isnull));
	parked = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
										2, &isnull));

	if (attempts < PG_INT32_MAX)
		attempts++;
	now = GetCurrentTimestamp();

	values[1] = Int32GetDatum(attempts);
	values[2] = PointerGetDatum(cstring_to_text_with_len(errstr, errlen));
	if (parked || attempts >= max_attempts)
	{
		/*
		 * parked: never handed out again until okno_requeue(); an event that
		 * was parked already keeps its parked_at
		 */
		nulls[3] = 'n';
		values[4] = TimestampTzGetDatum(now);
	}
	else
	{
		values[3] = TimestampTzGetDatum(now + retry_delay_us(attempts));
		nulls[4] = 'n';
		/* waiting relays learn when it comes due */
		okno_wake_at_commit();
	}
	if (subscriber != NULL)
	{
		values[5] = CStringGetTextDatum(subscriber);
		rc = SPI_execute_plan(okno_plan(&record_delivery_failure_plan), values, nulls,
							  false, 0);
	}
	else
		rc = SPI_execute_plan(okno_plan(columns ? &record_failure_columns_plan :
										&record_failure_plan),
							  values, nulls, false, 0);
	okno_check_spi(rc, SPI_OK_UPDATE_RETURNING, "outbox failure update");
	if (SPI_processed != 1)
		elog(ERROR, "outbox failure update changed " UINT64_FORMAT " rows", SPI_processed);

	/* called with "default": the outbox row as a delivery state */
	if (subscriber == NULL && PG_NARGS() > 2)
	{
		rc = SPI_execute_plan(okno_plan(&default_as_delivery_plan), values, NULL, false, 1);
		okno_check_spi(rc, SPI_OK_SELECT, "outbox delivery state");
	}

	if (columns)
	{
		/* okno's columns, as the OUT parameters */
		MemoryContext oldcxt = MemoryContextSwitchTo(cxt);
		Datum	   *cols = palloc(desc->natts * sizeof(Datum));
		bool	   *colnulls = palloc(desc->natts * sizeof(bool));

		if (SPI_tuptable->tupdesc->natts != desc->natts)
			elog(ERROR, "outbox failure update returned %d columns",
				 SPI_tuptable->tupdesc->natts);
		heap_deform_tuple(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, cols, colnulls);
		result = HeapTupleGetDatum(heap_form_tuple(desc, cols, colnulls));
		MemoryContextSwitchTo(oldcxt);
	}
	else
	{
		/*
		 * The row as a whole (RETURNING o, not *): a value of the table's
		 * row type as it is stored, so it matches the function's result
		 * type even after a column of outbox was dropped
		 */
		result = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (isnull)
			elog(ERROR, "outbox failure update returned no row");
		result = SPI_datumTransfer(result, false, -1);
	}
	okno_drain_forget_cursor();

	okno_spi_finish();
	okno_guard_end(&guard);

	PG_RETURN_DATUM(result);
}

/*
 * Run an UPDATE plan on one event (of the subscriber named by argument 1,
 * when the function has one: subscriber_plan then); true if it changed the
 * row.  delivered: the plan updates a delivered event, which for a
 * subscriber may have no row yet (handed out as it was copied).
 */
static bool
update_event(FunctionCallInfo fcinfo, const char *fname, OknoPlan *plan,
			 OknoPlan *subscriber_plan, bool delivered, const char *what)
{
	pg_uuid_t  *id = event_id_arg(fcinfo, fname);
	char	   *subscriber = NULL;
	Datum		values[2];
	int			rc;
	bool		changed;
	OknoGuard	guard;

	PreventCommandIfReadOnly(fname);
	okno_guard_begin(&guard);
	okno_spi_connect();
	if (PG_NARGS() > 1)
		subscriber = okno_subscriber_of(fcinfo, 1, fname);
	values[0] = UUIDPGetDatum(id);
	if (subscriber != NULL)
	{
		values[1] = CStringGetTextDatum(subscriber);
		plan = subscriber_plan;
	}
	rc = SPI_execute_plan(okno_plan(plan), values, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_UPDATE, what);
	changed = (SPI_processed > 0);
	/* handed out as it was copied: no row yet */
	if (!changed && subscriber != NULL && delivered &&
		write_delivered_row(id, subscriber))
	{
		rc = SPI_execute_plan(okno_plan(plan), values, NULL, false, 0);
		okno_check_spi(rc, SPI_OK_UPDATE, what);
		changed = (SPI_processed > 0);
	}
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
 * okno_release(event_id uuid, subscriber text) RETURNS boolean (0.5.0)
 *
 * False for an unknown event or one that is not delivered.
 */
Datum
okno_release(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(update_event(fcinfo, "okno_release()", &release_plan,
								&release_delivery_plan, true, "outbox release"));
}

/*
 * okno_requeue(event_id uuid) RETURNS boolean
 * okno_requeue(event_id uuid, subscriber text) RETURNS boolean (0.5.0)
 *
 * False for an unknown event or one already delivered.
 */
Datum
okno_requeue(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(update_event(fcinfo, "okno_requeue()", &requeue_plan,
								&requeue_delivery_plan, false, "outbox requeue"));
}
