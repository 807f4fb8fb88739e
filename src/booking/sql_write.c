/*-------------------------------------------------------------------------
 *
 * sql_write.c
 *	  A new booking, its key and its event written by statements: the path
 *	  for tables where the direct write (direct_write.c) could behave
 *	  differently from them.
 *
 * Each SPI statement is prepared once per backend and kept (okno_plan), and
 * every name in it is qualified: okno's schema for its tables,
 * OPERATOR(pg_catalog.=) for comparisons.  All run in the caller's
 * transaction with read_only = false, so under READ COMMITTED each takes a
 * fresh snapshot and sees what committed while we waited for a lock.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "base/base.h"
#include "booking/booking.h"
#include "outbox/outbox.h"

static OknoPlan check_references_plan = {
	.sql =
	"SELECT EXISTS (SELECT FROM %1$s.actors WHERE id OPERATOR(pg_catalog.=) $1),"
	" EXISTS (SELECT FROM %1$s.resources WHERE id OPERATOR(pg_catalog.=) $2)",
	.nargs = 2,
	.argtypes = {INT4OID, INT4OID}
};

/*
 * The booking, its key and its event, one plain INSERT each, as an
 * application would write them, so that a rule or trigger on the tables
 * acts as it would on those statements.  They need the privileges the
 * direct path checks (direct_write.c): INSERT, and SELECT of the columns
 * returned.
 */
static OknoPlan insert_booking_plan = {
	.sql =
	"INSERT INTO %1$s.bookings (resource_id, actor_id, starts_at, ends_at)"
	" VALUES ($1, $2, $3, $4)"
	" RETURNING id::pg_catalog.int8",
	.nargs = 4,
	.argtypes = {INT4OID, INT4OID, TIMESTAMPTZOID, TIMESTAMPTZOID}
};

static OknoPlan insert_key_plan = {
	.sql =
	"INSERT INTO %1$s.idempotency"
	" (actor_id, request_key, fingerprint, fingerprint_version, response_body)"
	" VALUES ($1, $2, $3, $4, $5) RETURNING response_body",
	.nargs = 5,
	.argtypes = {INT4OID, TEXTOID, TEXTOID, INT2OID, JSONBOID}
};

/*
 * actor_missing or resource_missing, in that order; returns if both exist.
 */
static void
check_references(int32 actor, int32 resource_id)
{
	Datum		values[2];
	bool		isnull;
	int			rc;

	values[0] = Int32GetDatum(actor);
	values[1] = Int32GetDatum(resource_id);
	rc = SPI_execute_plan(okno_plan(&check_references_plan), values, NULL, false, 1);
	okno_check_spi(rc, SPI_OK_SELECT, "reference check");
	if (SPI_processed != 1)
		elog(ERROR, "reference check returned " UINT64_FORMAT " rows", SPI_processed);

	if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
		okno_error_actor_missing(actor, false);
	if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull)))
		okno_error_resource_missing(resource_id);
}

/*
 * The statements of a new booking, for when the direct path (direct_write.c)
 * could behave differently from them: the actor and the resource must
 * exist (actor_missing, then resource_missing, before slot_busy), then the
 * booking, its key row and its booking_created event are inserted, one
 * statement each.  Returns the stored response (the card), copied into cxt.
 *
 * Whatever rules and triggers the tables carry act as on those statements,
 * with two exceptions that fail instead of committing a booking without its
 * key or its event: an INSTEAD rule on INSERT (refused before anything is
 * written), and a BEFORE trigger that keeps a row from being stored (the
 * statement inserted none).
 */
Jsonb *
okno_insert_sql(int32 actor, const OknoBookingIn *in, text *key,
				const char *fingerprint, pg_uuid_t *event_id, MemoryContext cxt)
{
	Datum		values[5];
	bool		isnull;
	int64		booking_id;
	Datum		d;
	Jsonb	   *result;
	MemoryContext oldcxt;
	int			rc;

	okno_refuse_instead_rules(OKNO_REL_BOOKINGS, "booking");
	okno_refuse_instead_rules(OKNO_REL_IDEMPOTENCY, "idempotency key");
	okno_refuse_instead_rules(OKNO_REL_OUTBOX, "event");

	check_references(actor, in->resource_id);

	values[0] = Int32GetDatum(in->resource_id);
	values[1] = Int32GetDatum(actor);
	values[2] = TimestampTzGetDatum(okno_unix_us_to_timestamptz(in->starts_us));
	values[3] = TimestampTzGetDatum(okno_unix_us_to_timestamptz(in->ends_us));
	rc = SPI_execute_plan(okno_plan(&insert_booking_plan), values, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_INSERT_RETURNING, "booking insert");
	if (SPI_processed != 1)
		okno_error_not_stored(OKNO_REL_BOOKINGS, "booking");
	booking_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											 1, &isnull));

	values[0] = Int32GetDatum(actor);
	values[1] = PointerGetDatum(key);
	values[2] = PointerGetDatum(cstring_to_text(fingerprint));
	values[3] = Int16GetDatum(OKNO_FINGERPRINT_VERSION);
	values[4] = JsonbPGetDatum(okno_booking_card(booking_id, actor, in, "confirmed"));
	rc = SPI_execute_plan(okno_plan(&insert_key_plan), values, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_INSERT_RETURNING, "idempotency insert");
	if (SPI_processed != 1)
		okno_error_not_stored(OKNO_REL_IDEMPOTENCY, "idempotency key");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		elog(ERROR, "idempotency insert returned a null response");
	oldcxt = MemoryContextSwitchTo(cxt);
	result = DatumGetJsonbPCopy(d);
	MemoryContextSwitchTo(oldcxt);

	okno_store_event(event_id, OKNO_EVENT_BOOKING_CREATED, okno_event_payload(booking_id));
	return result;
}
