/*-------------------------------------------------------------------------
 *
 * store.c
 *	  The SPI statements of okno_create_booking.
 *
 * Each statement is prepared once per backend and kept (okno_plan), and
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
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "okno.h"
#include "rfc3339.h"
#include "errors.h"

static OknoPlan lookup_key_plan = {
	.sql =
	"SELECT fingerprint, fingerprint_version, response_body"
	" FROM %1$s.idempotency"
	" WHERE actor_id OPERATOR(pg_catalog.=) $1"
	" AND request_key OPERATOR(pg_catalog.=) $2",
	.nargs = 2,
	.argtypes = {INT4OID, TEXTOID}
};

static OknoPlan check_references_plan = {
	.sql =
	"SELECT EXISTS (SELECT FROM %1$s.actors WHERE id OPERATOR(pg_catalog.=) $1),"
	" EXISTS (SELECT FROM %1$s.resources WHERE id OPERATOR(pg_catalog.=) $2)",
	.nargs = 2,
	.argtypes = {INT4OID, INT4OID}
};

/*
 * The booking, its key and its event, in one statement: one executor run
 * instead of four.  The booking is inserted only if its actor and resource
 * exist, so a missing one never reaches the exclusion check (which would
 * report slot_busy before actor_missing); when nothing was inserted the
 * caller finds out which is missing.  The stored response (the card) is
 * built here from the new booking's id and returned as the very datum
 * stored.
 */
static OknoPlan insert_booking_plan = {
	.sql =
	"WITH booking AS ("
	"  INSERT INTO %1$s.bookings (resource_id, actor_id, starts_at, ends_at)"
	"  SELECT $1, $2, $3, $4"
	"   WHERE EXISTS (SELECT FROM %1$s.actors WHERE id OPERATOR(pg_catalog.=) $2)"
	"     AND EXISTS (SELECT FROM %1$s.resources WHERE id OPERATOR(pg_catalog.=) $1)"
	"  RETURNING id),"
	" idempotency AS ("
	"  INSERT INTO %1$s.idempotency"
	"  (actor_id, request_key, fingerprint, fingerprint_version, response_body)"
	"  SELECT $2, $5, $6, $7, pg_catalog.jsonb_build_object("
	"   'id', booking.id, 'resource_id', $1, 'actor_id', $2,"
	"   'starts_at', $8, 'ends_at', $9, 'status', 'confirmed')"
	"  FROM booking RETURNING response_body),"
	" event AS ("
	"  INSERT INTO %1$s.outbox (id, kind, payload)"
	"  SELECT $10, $11, pg_catalog.jsonb_build_object('booking_id', booking.id)"
	"  FROM booking)"
	" SELECT response_body FROM idempotency",
	.nargs = 11,
	.argtypes = {INT4OID, INT4OID, TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID, TEXTOID,
				 INT2OID, TEXTOID, TEXTOID, UUIDOID, TEXTOID}
};

/*
 * Look up (actor, key).  With snapshot = InvalidSnapshot the lookup uses
 * the transaction's own snapshot rules; otherwise the one given.  The
 * stored response is copied into resultcxt.
 */
void
okno_lookup_key(int32 actor, text *key, Snapshot snapshot,
				MemoryContext resultcxt, OknoStoredKey *out)
{
	Datum		values[2];
	int			rc;
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	Datum		d;
	MemoryContext oldcxt;
	char	   *fp;

	values[0] = Int32GetDatum(actor);
	values[1] = PointerGetDatum(key);

	if (snapshot == InvalidSnapshot)
		rc = SPI_execute_plan(okno_plan(&lookup_key_plan), values, NULL, false, 1);
	else
		rc = SPI_execute_snapshot(okno_plan(&lookup_key_plan), values, NULL,
								  snapshot, InvalidSnapshot, true, false, 1);
	okno_check_spi(rc, SPI_OK_SELECT, "idempotency lookup");

	out->found = (SPI_processed > 0);
	if (!out->found)
		return;

	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;

	fp = SPI_getvalue(tup, desc, 1);
	strlcpy(out->fingerprint, fp ? fp : "", sizeof(out->fingerprint));

	d = SPI_getbinval(tup, desc, 2, &isnull);
	out->fingerprint_version = isnull ? 0 : DatumGetInt16(d);

	d = SPI_getbinval(tup, desc, 3, &isnull);
	if (isnull)
		elog(ERROR, "idempotency row for actor %d has a null response_body", actor);
	oldcxt = MemoryContextSwitchTo(resultcxt);
	out->response = DatumGetJsonbPCopy(d);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * actor_missing or resource_missing, in that order; returns if both exist.
 */
void
okno_check_references(int32 actor, int32 resource_id)
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
 * Insert the booking, its key row and its booking_created event, queue the
 * NOTIFY, and return the stored response (the card), copied into cxt.
 */
Jsonb *
okno_insert_booking(int32 actor, const OknoBookingIn *in, text *key,
					const char *fingerprint, MemoryContext cxt)
{
	Datum		values[11];
	char		starts[RFC3339_UTC_MAXLEN + 1];
	char		ends[RFC3339_UTC_MAXLEN + 1];
	pg_uuid_t  *event_id = palloc(sizeof(pg_uuid_t));
	bool		isnull;
	Datum		card;
	Jsonb	   *result;
	MemoryContext oldcxt;
	int			rc;

	(void) rfc3339_format_utc(in->starts_us, starts);
	(void) rfc3339_format_utc(in->ends_us, ends);
	okno_new_event_id(event_id);

	values[0] = Int32GetDatum(in->resource_id);
	values[1] = Int32GetDatum(actor);
	values[2] = TimestampTzGetDatum(okno_unix_us_to_timestamptz(in->starts_us));
	values[3] = TimestampTzGetDatum(okno_unix_us_to_timestamptz(in->ends_us));
	values[4] = PointerGetDatum(key);
	values[5] = PointerGetDatum(cstring_to_text(fingerprint));
	values[6] = Int16GetDatum(OKNO_FINGERPRINT_VERSION);
	values[7] = PointerGetDatum(cstring_to_text(starts));
	values[8] = PointerGetDatum(cstring_to_text(ends));
	values[9] = UUIDPGetDatum(event_id);
	values[10] = PointerGetDatum(cstring_to_text(OKNO_EVENT_BOOKING_CREATED));
	rc = SPI_execute_plan(okno_plan(&insert_booking_plan), values, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_SELECT, "booking insert");
	if (SPI_processed == 0)
	{
		/* the actor or the resource is missing: say which, actor first */
		okno_check_references(actor, in->resource_id);
		/* both exist now: they were created after the insert's snapshot */
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access due to a concurrently created actor or resource"),
				 errhint("Retry the transaction.")));
	}
	if (SPI_processed != 1)
		elog(ERROR, "booking insert returned " UINT64_FORMAT " rows", SPI_processed);

	card = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		elog(ERROR, "booking insert returned a null response");
	oldcxt = MemoryContextSwitchTo(cxt);
	result = DatumGetJsonbPCopy(card);
	MemoryContextSwitchTo(oldcxt);

	okno_notify();
	return result;
}
