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

#include "okno.h"
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

static OknoPlan insert_booking_plan = {
	.sql =
	"INSERT INTO %1$s.bookings (resource_id, actor_id, starts_at, ends_at)"
	" VALUES ($1, $2, $3, $4) RETURNING id",
	.nargs = 4,
	.argtypes = {INT4OID, INT4OID, TIMESTAMPTZOID, TIMESTAMPTZOID}
};

static OknoPlan insert_key_plan = {
	.sql =
	"INSERT INTO %1$s.idempotency"
	" (actor_id, request_key, fingerprint, fingerprint_version, response_body)"
	" VALUES ($1, $2, $3, $4, $5)",
	.nargs = 5,
	.argtypes = {INT4OID, TEXTOID, TEXTOID, INT2OID, JSONBOID}
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
 * actor_missing or resource_missing, in that order.
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
 * Insert the booking; return its id.
 */
int64
okno_insert_booking(int32 actor, const OknoBookingIn *in)
{
	Datum		values[4];
	bool		isnull;
	Datum		id;
	int			rc;

	values[0] = Int32GetDatum(in->resource_id);
	values[1] = Int32GetDatum(actor);
	values[2] = TimestampTzGetDatum(okno_unix_us_to_timestamptz(in->starts_us));
	values[3] = TimestampTzGetDatum(okno_unix_us_to_timestamptz(in->ends_us));
	rc = SPI_execute_plan(okno_plan(&insert_booking_plan), values, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_INSERT_RETURNING, "booking insert");
	if (SPI_processed != 1)
		elog(ERROR, "booking insert returned " UINT64_FORMAT " rows", SPI_processed);

	id = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		elog(ERROR, "booking insert returned a null id");
	return DatumGetInt64(id);
}

/*
 * Store the response under (actor, key).
 */
void
okno_insert_key(int32 actor, text *key, const char *fingerprint, Jsonb *response)
{
	Datum		values[5];
	int			rc;

	values[0] = Int32GetDatum(actor);
	values[1] = PointerGetDatum(key);
	values[2] = PointerGetDatum(cstring_to_text(fingerprint));
	values[3] = Int16GetDatum(OKNO_FINGERPRINT_VERSION);
	values[4] = JsonbPGetDatum(response);
	rc = SPI_execute_plan(okno_plan(&insert_key_plan), values, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_INSERT, "idempotency insert");
}
