/*-------------------------------------------------------------------------
 *
 * sql_write.c
 *	  A new booking, its key and its event written by statements: the path
 *	  for tables where the direct write (direct_write.c) could behave
 *	  differently from them.
 *
 * Two orders.  On one server the booking goes first and its key second,
 * as the course's service writes them; the request's advisory lock is what
 * keeps a second request with the key from running.  Where Citus
 * distributes idempotency, that lock is the calling node's only and the
 * key's row is the arbiter (docs/citus/KEYS.md): the key is claimed first,
 * INSERT ... ON CONFLICT DO NOTHING in the key's shard, which makes a
 * second request with the key wait for the first's transaction on
 * whichever node it runs, and then insert nothing; only then the booking,
 * with an id drawn before, so that the stored card is known when the key
 * is written.
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
#include "commands/sequence.h"
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

/* the key-first order: the booking's id, drawn before the key is claimed */
/*
 * The key-first order: the sequence of bookings.id ($1: bookings, $2 its
 * name) and whether the column is an identity
 */
static OknoPlan booking_id_sequence_plan = {
	.sql =
	"SELECT pg_catalog.pg_get_serial_sequence($2, 'id')::pg_catalog.regclass::pg_catalog.oid,"
	"       a.attidentity OPERATOR(pg_catalog.<>) ''"
	"  FROM pg_catalog.pg_attribute AS a"
	" WHERE a.attrelid OPERATOR(pg_catalog.=) $1 AND a.attname OPERATOR(pg_catalog.=) 'id'",
	.nargs = 2,
	.argtypes = {OIDOID, TEXTOID},
	.own = true
};

static OknoPlan insert_booking_id_plan = {
	.sql =
	"INSERT INTO %1$s.bookings (id, resource_id, actor_id, starts_at, ends_at)"
	" OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3, $4, $5)",
	.nargs = 5,
	.argtypes = {INT8OID, INT4OID, INT4OID, TIMESTAMPTZOID, TIMESTAMPTZOID}
};

/* the key's row; claimed (ON CONFLICT DO NOTHING) in the key-first order */
#define INSERT_KEY_SQL \
	"INSERT INTO %1$s.idempotency" \
	" (actor_id, request_key, fingerprint, fingerprint_version, response_body)" \
	" VALUES ($1, $2, $3, $4, $5)"
#define INSERT_KEY_ARGTYPES {INT4OID, TEXTOID, TEXTOID, INT2OID, JSONBOID}

static OknoPlan insert_key_plan = {
	.sql = INSERT_KEY_SQL " RETURNING response_body",
	.nargs = 5,
	.argtypes = INSERT_KEY_ARGTYPES
};

static OknoPlan claim_key_plan = {
	.sql = INSERT_KEY_SQL " ON CONFLICT (actor_id, request_key) DO NOTHING"
	" RETURNING response_body",
	.nargs = 5,
	.argtypes = INSERT_KEY_ARGTYPES
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
 * Insert the booking: with the id given (id > 0, the key-first order) or
 * with its default's; returns its id.
 */
static int64
insert_booking(int32 actor, const OknoBookingIn *in, int64 id)
{
	Datum		values[5];
	bool		isnull;
	int			rc;

	values[0] = Int64GetDatum(id);
	values[1] = Int32GetDatum(in->resource_id);
	values[2] = Int32GetDatum(actor);
	values[3] = TimestampTzGetDatum(okno_unix_us_to_timestamptz(in->starts_us));
	values[4] = TimestampTzGetDatum(okno_unix_us_to_timestamptz(in->ends_us));
	if (id > 0)
	{
		rc = SPI_execute_plan(okno_plan(&insert_booking_id_plan), values, NULL, false, 0);
		okno_check_spi(rc, SPI_OK_INSERT, "booking insert");
	}
	else
	{
		rc = SPI_execute_plan(okno_plan(&insert_booking_plan), values + 1, NULL, false, 0);
		okno_check_spi(rc, SPI_OK_INSERT_RETURNING, "booking insert");
	}
	if (SPI_processed != 1)
		okno_error_not_stored(OKNO_REL_BOOKINGS, "booking");
	if (id > 0)
		return id;
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
									   1, &isnull));
}

/*
 * The booking's id, drawn from the sequence of bookings.id before the
 * booking is written (its identity's or serial's: the binding requires a
 * default, which the key-first order cannot use), as the column's default
 * would draw it: an identity's without a privilege on the sequence, a
 * serial's default with USAGE or UPDATE on it.  The sequence is looked up
 * once per binding.
 */
static int64
draw_booking_id(void)
{
	static uint64 generation = 0;
	static Oid	seq = InvalidOid;
	static bool identity = false;
	const char *bookings = quote_qualified_identifier(okno_schema_name(), "bookings");

	if (generation != okno_cache_generation() || !OidIsValid(seq))
	{
		Datum		args[2];
		bool		isnull;
		int			rc;

		args[0] = ObjectIdGetDatum(okno_relid(OKNO_REL_BOOKINGS));
		args[1] = CStringGetTextDatum(bookings);
		rc = SPI_execute_plan(okno_plan(&booking_id_sequence_plan), args, NULL, true, 1);
		okno_check_spi(rc, SPI_OK_SELECT, "booking id's sequence");
		seq = SPI_processed == 1 ?
			DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
										   1, &isnull)) : InvalidOid;
		if (SPI_processed != 1 || isnull || !OidIsValid(seq))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("bookings.id has no sequence to draw a booking's id from"),
					 errdetail("Where Citus distributes idempotency, okno writes a booking's key before the booking and draws its id from the sequence of an identity or serial column."),
					 errhint("Make bookings.id an identity column: ALTER TABLE %s ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY.",
							 bookings)));
		identity = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											  2, &isnull));
		generation = okno_cache_generation();
	}
	return nextval_internal(seq, !identity);
}

/*
 * Insert the key row, with its response; the response as stored, copied
 * into cxt.  With claim, ON CONFLICT DO NOTHING, as the contract claims a
 * key where Citus distributes its store (keys/contract.c's
 * okno_key_claim_row): NULL when the key is another transaction's, after
 * waiting for it to end (it committed the key).
 */
static Jsonb *
insert_key(const OknoKeyRef *ref, text *key, const char *fingerprint,
		   Jsonb *response, bool claim, MemoryContext cxt)
{
	Datum		values[5];
	bool		isnull;
	Datum		d;
	Jsonb	   *result;
	MemoryContext oldcxt;
	int			rc;

	values[0] = Int32GetDatum(ref->actor);
	values[1] = PointerGetDatum(key);
	values[2] = PointerGetDatum(cstring_to_text(fingerprint));
	values[3] = Int16GetDatum(OKNO_FINGERPRINT_VERSION);
	values[4] = JsonbPGetDatum(response);
	if (claim)
	{
		if (!okno_key_claim_row(ref, okno_plan(&claim_key_plan), values,
								SPI_OK_INSERT_RETURNING))
			return NULL;
	}
	else
	{
		rc = SPI_execute_plan(okno_plan(&insert_key_plan), values, NULL, false, 0);
		okno_check_spi(rc, SPI_OK_INSERT_RETURNING, "idempotency insert");
	}
	if (SPI_processed != 1)
		okno_error_not_stored(OKNO_REL_IDEMPOTENCY, "idempotency key");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		elog(ERROR, "idempotency insert returned a null response");
	oldcxt = MemoryContextSwitchTo(cxt);
	result = DatumGetJsonbPCopy(d);
	MemoryContextSwitchTo(oldcxt);
	return result;
}

/*
 * The statements of a new booking, for when the direct path (direct_write.c)
 * could behave differently from them: the actor and the resource must
 * exist (actor_missing, then resource_missing, before slot_busy), then the
 * booking, its key row and its booking_created event are inserted, one
 * statement each (key_first: the key claimed first, see above).  Returns
 * the stored response (the card), copied into cxt; NULL when key_first
 * and the key is another request's, committed while this one waited
 * (nothing is written then: the caller looks the key up again).
 *
 * Whatever rules and triggers the tables carry act as on those statements,
 * with two exceptions that fail instead of committing a booking without its
 * key or its event: an INSTEAD rule on INSERT (refused before anything is
 * written), and a BEFORE trigger that keeps a row from being stored (the
 * statement inserted none).
 */
Jsonb *
okno_insert_sql(const OknoKeyRef *ref, const OknoBookingIn *in, text *key,
				const char *fingerprint, pg_uuid_t *event_id, bool key_first,
				MemoryContext cxt)
{
	int64		booking_id;
	Jsonb	   *result;

	okno_refuse_instead_rules(OKNO_REL_BOOKINGS, "booking");
	okno_refuse_instead_rules(OKNO_REL_IDEMPOTENCY, "idempotency key");
	okno_refuse_instead_rules(OKNO_REL_OUTBOX, "event");

	check_references(ref->actor, in->resource_id);

	if (key_first)
	{
		booking_id = draw_booking_id();
		result = insert_key(ref, key, fingerprint,
							okno_booking_card(booking_id, ref->actor, in, "confirmed"),
							true, cxt);
		if (result == NULL)
			return NULL;
		okno_key_claimed_new(ref);
		insert_booking(ref->actor, in, booking_id);
	}
	else
	{
		booking_id = insert_booking(ref->actor, in, 0);
		result = insert_key(ref, key, fingerprint,
							okno_booking_card(booking_id, ref->actor, in, "confirmed"),
							false, cxt);
	}

	okno_store_event(event_id, OKNO_EVENT_BOOKING_CREATED, okno_event_payload(booking_id),
					 psprintf(INT64_FORMAT, booking_id));
	return result;
}
