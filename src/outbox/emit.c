/*-------------------------------------------------------------------------
 *
 * emit.c
 *	  okno_emit(kind, payload, order_key): an outbox event written by any
 *	  function, in the caller's transaction (okno 0.7.0).
 *
 * The event is a row of the application's outbox like a booking's: an id
 * (UUID version 7), its kind, its payload, and its order key.  Drains,
 * subscribers, retries, parking, the dead-letter tools and the relay
 * treat it as they treat a booking's event.  Events with the same order
 * key are handed out in the order they were written, per subscriber,
 * exactly as a booking's events are (base.h's OKNO_SQL_ORDER_KEY: a
 * booking's key is its id, so an event emitted with a booking's id as its
 * key is ordered with that booking's events); NULL is no order.
 *
 * The kind's rule: 1 to 40 bytes (the course's outbox.kind is
 * varchar(40)) of lower-case ASCII letters, digits, "_", "-" and ".",
 * starting with a letter; okno's own kinds, booking_created and
 * booking_cancelled, are okno's to write (a second booking_created of a
 * booking would be one okno_verify reports, and the order rule takes a
 * booking_created to be its booking's first event).  An order key is 1 to
 * 255 bytes of any text.  Violations are invalid_parameter_value (22023),
 * NULLs null_value_not_allowed (22004).
 *
 * Writers of one order key take turns: okno_emit takes a transaction-level
 * lock on its key (an advisory tag on the key's hash, objsubid 6, which no
 * SQL advisory-lock function takes) before it takes the event's id, and
 * okno_cancel_booking on its booking's key.  So of two events of one key
 * the later id is the later commit, and a drain that sees the later one
 * sees the earlier one too (delivery.h's rule holds the later back until
 * the earlier is delivered): without the turn, a transaction that wrote
 * second could commit first and its event go out first.  A booking's
 * create needs none (nothing names the booking before it commits).  Keys
 * whose hashes collide only wait for each other.  The lock is each node's
 * own; where Citus has outbox (by bucket, or in one shard) the turn is
 * also taken on the node of the key's shard, so that writers of one key
 * on two nodes take turns too: pg_advisory_xact_lock of the key's hash in
 * the target list of a statement on the key's bucket, which Citus sends
 * to that shard and which holds the lock there to the end of the
 * distributed transaction.
 *
 * On tables not yet prepared for okno 0.7.0 (no outbox.order_key: the
 * owner adds it with okno_prepare_tables()) an event without an order key
 * is written as before, and one with a key is refused (tables_unfit).
 *
 * The row is written by a plain INSERT of okno's columns, as the caller
 * (a superuser's call: as the tables' owner, owner.c), so the owner's
 * triggers, rules and defaults act as on any insert; an INSTEAD rule, or
 * a BEFORE trigger that keeps the row from being stored, is an error
 * rather than an event silently lost.  The commit wakes the relays waiting
 * in okno_wait (wake.c), and sends NOTIFY okno_outbox with okno.notify on.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/uuid.h"

#include "base/base.h"
#include "pure/name_rule.h"
#include "outbox/outbox.h"

PG_FUNCTION_INFO_V1(okno_emit);

#define OKNO_KIND_MAXLEN		40
#define OKNO_ORDER_KEY_MAXLEN	255

/*
 * (on tables not yet prepared for okno 0.7.0, which lack order_key, an
 * event without an order key is written all the same; $4 is NULL then)
 */
static OknoPlan emit_plan = {
	.sql =
	"INSERT INTO %1$s.outbox (id, kind, payload, order_key) VALUES ($1, $2, $3, $4)",
	.older = {[OKNO_PLAN_UNPREPARED - 1] =
	"INSERT INTO %1$s.outbox (id, kind, payload) VALUES ($1, $2, $3)"},
	.nargs = 4,
	.argtypes = {UUIDOID, TEXTOID, JSONBOID, TEXTOID}
};

/* the same where Citus distributes outbox by bucket (event_bucket.c) */
static OknoPlan emit_bucket_plan = {
	.sql =
	"INSERT INTO %1$s.outbox (id, kind, payload, order_key, " OKNO_OUTBOX_BUCKET_COLUMN ")"
	" VALUES ($1, $2, $3, $4, $5)",
	.nargs = 5,
	.argtypes = {UUIDOID, TEXTOID, JSONBOID, TEXTOID, INT4OID}
};

/*
 * An order key's turn on the node of its shard where Citus distributes
 * outbox by bucket ($1 the key's bucket, $2 the lock's hash) or keeps it
 * in one shard ($1 unused): the statement's one row is its count of no
 * row (an id is never NULL), and its lock is taken where Citus runs it.
 * The subquery's FOR UPDATE (of no row) is what keeps the lock: Citus
 * sends a read-only statement of a transaction that has not written yet
 * outside a transaction block, unless the client opened one (BEGIN), so
 * in autocommit the lock ended with the statement; a row lock inside a
 * function makes it open one (Citus's TaskListRequiresRollback).  A
 * writer with no UPDATE right on outbox runs it as outbox's owner
 * (okno_execute_locking).
 */
#define ORDER_TURN_SQL(in) \
	"SELECT pg_catalog.pg_advisory_xact_lock($2), pg_catalog.count(*)" \
	" FROM (SELECT FROM %1$s.outbox AS o WHERE o.id IS NULL" in " FOR UPDATE) AS x"
static OknoPlan order_turn_bucket_plan = {
	.sql = ORDER_TURN_SQL(" AND o." OKNO_OUTBOX_BUCKET_COLUMN " OPERATOR(pg_catalog.=) $1"),
	.nargs = 2,
	.argtypes = {INT4OID, INT8OID},
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
};
static OknoPlan order_turn_one_shard_plan = {
	.sql = ORDER_TURN_SQL(" AND $1 IS NOT NULL"),
	.nargs = 2,
	.argtypes = {INT4OID, INT8OID},
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
};

/* the kind argument, checked: a palloc'd C string */
static char *
kind_arg(FunctionCallInfo fcinfo)
{
	char	   *kind;

	okno_require_arg(fcinfo, 0, "kind", ERRCODE_NULL_VALUE_NOT_ALLOWED,
					 "Name the event's kind, such as \"booking_rescheduled\".");
	kind = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (!okno_name_valid(kind, strlen(kind), OKNO_KIND_MAXLEN, "_-."))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid event kind \"%s\"", kind),
				 errdetail("An event kind is 1 to %d characters: lower-case letters, digits, \"_\", \"-\" and \".\", starting with a letter.",
						   OKNO_KIND_MAXLEN),
				 errhint("Name the event's kind, such as \"booking_rescheduled\".")));
	if (strcmp(kind, OKNO_EVENT_BOOKING_CREATED) == 0 ||
		strcmp(kind, OKNO_EVENT_BOOKING_CANCELLED) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("event kind \"%s\" is okno's own", kind),
				 errdetail("okno writes %s and %s events with the bookings they are about.",
						   OKNO_EVENT_BOOKING_CREATED, OKNO_EVENT_BOOKING_CANCELLED),
				 errhint("Give the event a kind of its own.")));
	return kind;
}

/* the order key argument, checked (NULL: no order) */
static text *
order_key_arg(FunctionCallInfo fcinfo)
{
	text	   *key;
	int			len;

	if (PG_ARGISNULL(2))
		return NULL;
	key = PG_GETARG_TEXT_PP(2);
	len = VARSIZE_ANY_EXHDR(key);
	if (len == 0 || len > OKNO_ORDER_KEY_MAXLEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid order key"),
				 errdetail("An order key is 1 to %d bytes; it is %d.", OKNO_ORDER_KEY_MAXLEN, len),
				 errhint("Pass NULL for an event without an order.")));
	return key;
}

/*
 * Take the turn of order key (len bytes) until the end of the transaction;
 * where Citus has outbox, also on the node of the key's shard, as the
 * caller if it may lock outbox's rows, else as outbox's owner.
 */
void
okno_lock_order_key(const char *key, int len)
{
	uint64		hash = DatumGetUInt64(hash_any_extended((const unsigned char *) key, len, 0));
	const OknoBinding *b = okno_binding();
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) (hash >> 32), (uint32) hash,
						 OKNO_LOCK_SUBID_ORDER);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
	if (b->outbox_buckets || b->outbox_one_shard)
	{
		OknoPlan   *plan = b->outbox_buckets ? &order_turn_bucket_plan : &order_turn_one_shard_plan;
		Datum		values[2];
		int			rc;

		values[0] = Int32GetDatum(b->outbox_buckets ? okno_event_bucket(pnstrdup(key, len), NULL) : 0);
		values[1] = Int64GetDatum((int64) hash);
		okno_spi_connect();
		rc = okno_execute_locking(okno_relid(OKNO_REL_OUTBOX), plan, values, 1);
		okno_check_spi(rc, SPI_OK_SELECT, "order key's turn on its shard");
		okno_spi_finish();
	}
}

/*
 * okno_emit(kind text, payload jsonb, order_key text DEFAULT NULL)
 *	 RETURNS uuid
 */
Datum
okno_emit(PG_FUNCTION_ARGS)
{
	char	   *kind;
	Jsonb	   *payload;
	text	   *order_key;
	pg_uuid_t  *id = palloc(sizeof(pg_uuid_t));
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	OknoPlan   *plan = &emit_plan;
	OknoGuard	guard;
	int			rc;

	PreventCommandIfReadOnly("okno_emit()");
	kind = kind_arg(fcinfo);
	okno_require_arg(fcinfo, 1, "payload", ERRCODE_NULL_VALUE_NOT_ALLOWED,
					 "Pass a JSON value; 'null'::jsonb is one.");
	payload = PG_GETARG_JSONB_P(1);
	order_key = order_key_arg(fcinfo);

	okno_guard_begin(&guard);
	if (order_key != NULL && !okno_binding()->order_keys)
		okno_error_tables_unfit(quote_identifier(okno_schema_name()),
								"outbox.order_key: missing (the order keys of okno_emit() need it)",
								false, NULL);
	okno_refuse_instead_rules(OKNO_REL_OUTBOX, "event");
	okno_fan_out_lock();
	/* the key's turn, then the id: ids of one key in commit order */
	if (order_key != NULL)
		okno_lock_order_key(VARDATA_ANY(order_key), VARSIZE_ANY_EXHDR(order_key));
	okno_new_event_id(id);
	values[0] = UUIDPGetDatum(id);
	values[1] = CStringGetTextDatum(kind);
	values[2] = JsonbPGetDatum(payload);
	if (order_key != NULL)
		values[3] = PointerGetDatum(order_key);
	else
	{
		values[3] = (Datum) 0;
		nulls[3] = 'n';
	}
	if (okno_binding()->outbox_buckets)
	{
		values[4] = Int32GetDatum(okno_event_bucket(order_key != NULL ?
													text_to_cstring(order_key) : NULL, id));
		plan = &emit_bucket_plan;
	}
	okno_spi_connect();
	rc = SPI_execute_plan(okno_plan(plan), values, nulls, false, 0);
	okno_check_spi(rc, SPI_OK_INSERT, "outbox insert");
	if (SPI_processed != 1)
		okno_error_not_stored(OKNO_REL_OUTBOX, "event");
	if (okno_binding()->outbox_buckets)
		okno_fan_out_event(id, DatumGetInt32(values[4]), kind,
						   order_key != NULL ? text_to_cstring(order_key) : NULL);
	okno_spi_finish();
	okno_notify();
	okno_guard_end(&guard);

	PG_RETURN_UUID_P(id);
}
