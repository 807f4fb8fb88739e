/*-------------------------------------------------------------------------
 *
 * deadletter.c
 *	  Parked events, handled in bulk or given up: okno_requeue_parked,
 *	  okno_discard.
 *
 * okno_requeue_parked(subscriber, kind, error_like, parked_before) does what
 * okno_requeue does for every parked event that matches all the filters
 * given (a NULL filter matches anything; a NULL subscriber, every
 * subscriber): attempts reset, available at once.  The events are locked in
 * id order, so two bulk requeues never deadlock, and it returns how many it
 * requeued (an event parked for two subscribers counts twice).
 *
 * okno_discard(event_id, subscriber) gives one parked event up on purpose.
 * The event as it was (kind, payload, attempts, last error, when it was
 * parked) goes to the table okno_discarded with who discarded it and when,
 * and the event counts as done for that subscriber: never handed out again,
 * and no longer holding back the later events of its booking.  For the
 * default subscriber "done" is outbox.delivered_at, set to the time of the
 * discard, for another its okno_delivery.delivered_at; the record is what tells it from a delivery (okno_verify checks
 * that the two agree), and okno_purge leaves the records alone.
 *
 * Both work in the caller's transaction and wake waiting relays at commit.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "base/base.h"
#include "outbox/outbox.h"
#include "delivery/delivery.h"

PG_FUNCTION_INFO_V1(okno_requeue_parked);
PG_FUNCTION_INFO_V1(okno_discard);

static OknoPlan requeue_parked_plan = {
	.sql =
	"WITH picked AS ("
	" SELECT o.id FROM %1$s.outbox AS o"
	"  WHERE o.parked_at IS NOT NULL AND o.delivered_at IS NULL"
	"    AND ($1::pg_catalog.text IS NULL OR o.kind::pg_catalog.text OPERATOR(pg_catalog.=) $1)"
	"    AND ($2::pg_catalog.text IS NULL OR o.last_error OPERATOR(pg_catalog.~~) $2)"
	"    AND ($3::pg_catalog.timestamptz IS NULL OR o.parked_at OPERATOR(pg_catalog.<) $3)"
	"  ORDER BY o.id FOR UPDATE)"
	" UPDATE %1$s.outbox AS o SET parked_at = NULL, attempts = 0, available_at = NULL"
	"  FROM picked WHERE o.id OPERATOR(pg_catalog.=) picked.id",
	.nargs = 3,
	.argtypes = {TEXTOID, TEXTOID, TIMESTAMPTZOID}
};

static OknoPlan discard_lock_plan = {
	.sql =
	"SELECT o.kind, o.payload, o.attempts, o.last_error, o.parked_at"
	"  FROM %1$s.outbox AS o"
	" WHERE o.id OPERATOR(pg_catalog.=) $1"
	"   AND o.parked_at IS NOT NULL AND o.delivered_at IS NULL"
	" FOR UPDATE",
	.nargs = 1,
	.argtypes = {UUIDOID}
};

static OknoPlan discard_record_plan = {
	.sql =
	"INSERT INTO %1$s.okno_discarded (event_id, subscriber, kind, payload, attempts,"
	" last_error, parked_at, discarded_at, discarded_by)"
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
	.nargs = 9,
	.argtypes = {UUIDOID, TEXTOID, TEXTOID, JSONBOID, INT4OID, TEXTOID,
	TIMESTAMPTZOID, TIMESTAMPTZOID, NAMEOID}
};

static OknoPlan discard_done_plan = {
	.sql =
	"UPDATE %1$s.outbox SET delivered_at = $2, parked_at = NULL"
	" WHERE id OPERATOR(pg_catalog.=) $1",
	.nargs = 2,
	.argtypes = {UUIDOID, TIMESTAMPTZOID}
};

/* the same for the subscribers' delivery states ($4: one subscriber, or all) */
static OknoPlan requeue_parked_delivery_plan = {
	.sql =
	"WITH picked AS ("
	" SELECT d.subscriber, d.event_id FROM %1$s.okno_delivery AS d"
	"   JOIN %1$s.outbox AS o ON o.id OPERATOR(pg_catalog.=) d.event_id"
	"  WHERE d.parked_at IS NOT NULL AND d.delivered_at IS NULL"
	"    AND ($4::pg_catalog.text IS NULL OR d.subscriber OPERATOR(pg_catalog.=) $4)"
	"    AND ($1::pg_catalog.text IS NULL OR o.kind::pg_catalog.text OPERATOR(pg_catalog.=) $1)"
	"    AND ($2::pg_catalog.text IS NULL OR d.last_error OPERATOR(pg_catalog.~~) $2)"
	"    AND ($3::pg_catalog.timestamptz IS NULL OR d.parked_at OPERATOR(pg_catalog.<) $3)"
	"  ORDER BY d.event_id, d.subscriber FOR UPDATE OF d)"
	" UPDATE %1$s.okno_delivery AS d SET parked_at = NULL, attempts = 0, available_at = NULL"
	"  FROM picked WHERE d.subscriber OPERATOR(pg_catalog.=) picked.subscriber"
	"   AND d.event_id OPERATOR(pg_catalog.=) picked.event_id",
	.nargs = 4,
	.argtypes = {TEXTOID, TEXTOID, TIMESTAMPTZOID, TEXTOID}
};

static OknoPlan discard_lock_delivery_plan = {
	.sql =
	"SELECT o.kind, o.payload, d.attempts, d.last_error, d.parked_at"
	"  FROM %1$s.okno_delivery AS d"
	"  JOIN %1$s.outbox AS o ON o.id OPERATOR(pg_catalog.=) d.event_id"
	" WHERE d.event_id OPERATOR(pg_catalog.=) $1 AND d.subscriber OPERATOR(pg_catalog.=) $2"
	"   AND d.parked_at IS NOT NULL AND d.delivered_at IS NULL"
	" FOR UPDATE OF d",
	.nargs = 2,
	.argtypes = {UUIDOID, TEXTOID}
};

static OknoPlan discard_done_delivery_plan = {
	.sql =
	"UPDATE %1$s.okno_delivery SET delivered_at = $2, parked_at = NULL"
	" WHERE event_id OPERATOR(pg_catalog.=) $1 AND subscriber OPERATOR(pg_catalog.=) $3",
	.nargs = 3,
	.argtypes = {UUIDOID, TIMESTAMPTZOID, TEXTOID}
};

/*
 * okno_requeue_parked(subscriber text DEFAULT NULL, kind text DEFAULT NULL,
 *					   error_like text DEFAULT NULL,
 *					   parked_before timestamptz DEFAULT NULL) RETURNS bigint
 */
Datum
okno_requeue_parked(PG_FUNCTION_ARGS)
{
	Datum		values[4];
	char		nulls[4];
	bool		all = PG_ARGISNULL(0);
	char	   *subscriber = NULL;
	int			rc;
	uint64		n = 0;
	int			i;
	OknoGuard	guard;

	memset(nulls, ' ', sizeof(nulls));
	for (i = 0; i < 3; i++)
	{
		if (PG_ARGISNULL(i + 1))
		{
			values[i] = (Datum) 0;
			nulls[i] = 'n';
		}
		else
			values[i] = PG_GETARG_DATUM(i + 1);
	}

	PreventCommandIfReadOnly("okno_requeue_parked()");

	okno_guard_begin(&guard);
	okno_spi_connect();
	/* every subscriber when NULL */
	if (!all)
		subscriber = okno_subscriber_of(fcinfo, 0, "okno_requeue_parked()");
	if (all || subscriber == NULL)
	{
		rc = SPI_execute_plan(okno_plan(&requeue_parked_plan), values, nulls, false, 0);
		okno_check_spi(rc, SPI_OK_UPDATE, "outbox bulk requeue");
		n += SPI_processed;
	}
	if (all || subscriber != NULL)
	{
		if (subscriber != NULL)
			values[3] = CStringGetTextDatum(subscriber);
		else
			nulls[3] = 'n';
		rc = SPI_execute_plan(okno_plan(&requeue_parked_delivery_plan), values, nulls,
							  false, 0);
		okno_check_spi(rc, SPI_OK_UPDATE, "delivery bulk requeue");
		n += SPI_processed;
	}
	okno_spi_finish();
	okno_guard_end(&guard);

	if (n > 0)
	{
		okno_notify();
		okno_drain_forget_cursor();
	}
	PG_RETURN_INT64((int64) n);
}

/*
 * okno_discard(event_id uuid, subscriber text DEFAULT 'default')
 *	 RETURNS boolean
 *
 * False when the event is not parked for that subscriber (unknown, pending
 * or done).
 */
Datum
okno_discard(PG_FUNCTION_ARGS)
{
	pg_uuid_t  *id;
	char	   *subscriber;
	Datum		values[9];
	char		nulls[9];
	TimestampTz now;
	int			rc;
	int			i;
	OknoGuard	guard;
	Name		caller;

	memset(nulls, ' ', sizeof(nulls));
	okno_require_arg(fcinfo, 0, "event_id", ERRCODE_NULL_VALUE_NOT_ALLOWED,
					 "Pass the id of a parked event to okno_discard().");
	id = PG_GETARG_UUID_P(0);

	PreventCommandIfReadOnly("okno_discard()");

	/* who discards: the caller, also where it runs as the tables' owner */
	caller = palloc0(NAMEDATALEN);
	namestrcpy(caller, GetUserNameFromId(GetUserId(), false));

	okno_guard_begin(&guard);
	okno_spi_connect();
	/* NULL: the default subscriber */
	subscriber = okno_subscriber_of(fcinfo, 1, "okno_discard()");
	values[0] = UUIDPGetDatum(id);
	if (subscriber != NULL)
	{
		values[1] = CStringGetTextDatum(subscriber);
		rc = SPI_execute_plan(okno_plan(&discard_lock_delivery_plan), values, NULL, false, 1);
	}
	else
		rc = SPI_execute_plan(okno_plan(&discard_lock_plan), values, NULL, false, 1);
	okno_check_spi(rc, SPI_OK_SELECT, "outbox discard lock");
	if (SPI_processed == 0)
	{
		okno_spi_finish();
		okno_guard_end(&guard);
		PG_RETURN_BOOL(false);
	}

	/* the record: the event as it was, then when and by whom */
	now = GetCurrentTimestamp();
	values[1] = CStringGetTextDatum(subscriber != NULL ? subscriber : OKNO_DEFAULT_SUBSCRIBER);
	for (i = 0; i < 5; i++)
	{
		bool		isnull;

		values[i + 2] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
									  i + 1, &isnull);
		if (isnull)
			nulls[i + 2] = 'n';
	}
	values[7] = TimestampTzGetDatum(now);
	values[8] = NameGetDatum(caller);
	rc = SPI_execute_plan(okno_plan(&discard_record_plan), values, nulls, false, 0);
	okno_check_spi(rc, SPI_OK_INSERT, "discard record insert");
	if (SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the record of the discard was not stored in table \"%s.okno_discarded\"",
						okno_schema_name()),
				 errdetail("A BEFORE trigger or a rule on the table kept the row from being stored; "
						   "okno discards an event only together with its record."),
				 errhint("Let okno's inserts into okno_discarded through.")));

	values[1] = TimestampTzGetDatum(now);
	if (subscriber != NULL)
	{
		values[2] = CStringGetTextDatum(subscriber);
		rc = SPI_execute_plan(okno_plan(&discard_done_delivery_plan), values, NULL, false, 0);
	}
	else
		rc = SPI_execute_plan(okno_plan(&discard_done_plan), values, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_UPDATE, "outbox discard");
	if (SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the discarded event was not marked done in table \"%s.%s\"",
						okno_schema_name(), subscriber != NULL ? "okno_delivery" : "outbox"),
				 errdetail("A BEFORE trigger or a rule on the table kept the row from being updated."),
				 errhint("Let okno's updates of %s through.",
						 subscriber != NULL ? "okno_delivery" : "outbox")));
	okno_spi_finish();
	okno_guard_end(&guard);

	/* the later events of its booking are free now */
	okno_wake_at_commit();
	okno_drain_forget_cursor();
	PG_RETURN_BOOL(true);
}
