/*-------------------------------------------------------------------------
 *
 * get_cancel.c
 *	  Reading and cancelling a booking: okno_get_booking,
 *	  okno_cancel_booking.
 *
 * Both are scoped to the actor: a booking that does not exist and one that
 * belongs to another actor are the same error, booking_missing (OKB07), so
 * nothing reveals another actor's bookings.  The card has the creation
 * response's shape with the booking's current status.
 *
 * Cancelling a confirmed booking sets status = 'cancelled' (its slot is free
 * at once: the exclusion constraint covers confirmed bookings only) and
 * writes a booking_cancelled event with payload {"booking_id": N} in the
 * same transaction.  Cancelling a cancelled booking returns its card and
 * writes nothing.  The creation response stored under the original key is
 * never changed: a replay still returns the confirmed snapshot.
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

#include "base/base.h"
#include "booking/booking.h"
#include "outbox/outbox.h"

PG_FUNCTION_INFO_V1(okno_get_booking);
PG_FUNCTION_INFO_V1(okno_cancel_booking);

static OknoPlan get_booking_plan = {
	.sql =
	"SELECT resource_id, starts_at, ends_at, status FROM %1$s.bookings"
	" WHERE id OPERATOR(pg_catalog.=) $1 AND actor_id OPERATOR(pg_catalog.=) $2",
	.nargs = 2,
	.argtypes = {INT8OID, INT4OID}
};

static OknoPlan cancel_booking_plan = {
	.sql =
	"UPDATE %1$s.bookings SET status = 'cancelled'"
	" WHERE id OPERATOR(pg_catalog.=) $1 AND actor_id OPERATOR(pg_catalog.=) $2"
	" AND status OPERATOR(pg_catalog.=) 'confirmed'"
	" RETURNING resource_id, starts_at, ends_at, status",
	.nargs = 2,
	.argtypes = {INT8OID, INT4OID}
};

/*
 * The card of the first row of the last SPI result (resource_id, starts_at,
 * ends_at, status), allocated in cxt.
 */
static Jsonb *
card_from_spi(int64 id, int32 actor, MemoryContext cxt)
{
	HeapTuple	tup = SPI_tuptable->vals[0];
	TupleDesc	desc = SPI_tuptable->tupdesc;
	OknoBookingIn b;
	char	   *status;
	bool		isnull;
	MemoryContext oldcxt;
	Jsonb	   *card;

	b.resource_id = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
	b.starts_us = okno_timestamptz_to_unix_us(DatumGetTimestampTz(SPI_getbinval(tup, desc, 2, &isnull)));
	b.ends_us = okno_timestamptz_to_unix_us(DatumGetTimestampTz(SPI_getbinval(tup, desc, 3, &isnull)));
	status = SPI_getvalue(tup, desc, 4);

	oldcxt = MemoryContextSwitchTo(cxt);
	card = okno_booking_card(id, actor, &b, status);
	MemoryContextSwitchTo(oldcxt);
	return card;
}

/*
 * Look the booking up for the actor; booking_missing if there is none.
 */
static Jsonb *
get_card(int64 id, int32 actor, MemoryContext cxt)
{
	Datum		values[2];
	int			rc;

	values[0] = Int64GetDatum(id);
	values[1] = Int32GetDatum(actor);
	rc = SPI_execute_plan(okno_plan(&get_booking_plan), values, NULL, false, 1);
	okno_check_spi(rc, SPI_OK_SELECT, "booking lookup");
	if (SPI_processed == 0)
		okno_error_booking_missing(id, false);
	return card_from_spi(id, actor, cxt);
}

/*
 * okno_get_booking(actor integer, booking_id bigint) RETURNS jsonb
 */
Datum
okno_get_booking(PG_FUNCTION_ARGS)
{
	MemoryContext cxt = CurrentMemoryContext;
	Jsonb	   *card;
	OknoGuard	guard;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		okno_error_booking_missing(0, true);

	okno_guard_begin(&guard);
	okno_spi_connect();
	card = get_card(PG_GETARG_INT64(1), PG_GETARG_INT32(0), cxt);
	okno_spi_finish();
	okno_guard_end(&guard);

	PG_RETURN_JSONB_P(card);
}

/*
 * okno_cancel_booking(actor integer, booking_id bigint) RETURNS jsonb
 */
Datum
okno_cancel_booking(PG_FUNCTION_ARGS)
{
	MemoryContext cxt = CurrentMemoryContext;
	int64		id;
	int32		actor;
	Datum		values[2];
	int			rc;
	Jsonb	   *card;
	OknoGuard	guard;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		okno_error_booking_missing(0, true);
	actor = PG_GETARG_INT32(0);
	id = PG_GETARG_INT64(1);

	PreventCommandIfReadOnly("okno_cancel_booking()");

	okno_guard_begin(&guard);
	okno_spi_connect();
	/* before any lock: a subscription may wait for the event's writer */
	okno_fan_out_lock();

	values[0] = Int64GetDatum(id);
	values[1] = Int32GetDatum(actor);
	rc = SPI_execute_plan(okno_plan(&cancel_booking_plan), values, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_UPDATE_RETURNING, "booking cancel");
	if (SPI_processed == 1)
	{
		char	   *key = psprintf(INT64_FORMAT, id);

		card = card_from_spi(id, actor, cxt);
		/* the booking's order key's turn (outbox/emit.c), then the event */
		okno_lock_order_key(key, strlen(key));
		okno_insert_event(OKNO_EVENT_BOOKING_CANCELLED, okno_event_payload(id), key);
	}
	else
	{
		/* cancelled already, or not this actor's: no event either way */
		card = get_card(id, actor, cxt);
	}

	okno_spi_finish();
	okno_guard_end(&guard);

	PG_RETURN_JSONB_P(card);
}
