/*-------------------------------------------------------------------------
 *
 * event.c
 *	  Write one outbox event and wake the listeners (wake.c), and the
 *	  setting okno.notify.
 *
 * Event ids are UUID version 7 (RFC 9562): a millisecond Unix timestamp,
 * twelve more bits of sub-millisecond time, then 62 random bits.  uuid7.c
 * keeps them strictly increasing within a backend even if the clock stands
 * still or steps back, so one backend's events sort in the order written.
 *
 * NOTIFY okno_outbox is queued with the event; PostgreSQL delivers it only
 * if and when the transaction commits.  Its payload is empty, so the
 * notifications of one transaction fold into one.  PostgreSQL serialises
 * the commits of notifying transactions (a lock on the notification queue
 * is held until the commit is flushed), which costs throughput when many
 * sessions create at once with synchronous_commit on; okno.notify = off
 * leaves the waking to the relays' polling.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/async.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/uuid.h"

#include "base/base.h"
#include "outbox/outbox.h"
#include "pure/uuid7.h"

/*
 * GUC: NOTIFY okno_outbox when an event is written or made due again.  Off
 * by default: PostgreSQL holds a database-wide lock from a notifying
 * transaction's pre-commit until its commit record is flushed, so
 * notifying writers commit one at a time (no group commit).
 */
static bool notify_enabled = false;

static uuid7_state event_id_state;

static OknoPlan insert_event_plan = {
	.sql =
	"INSERT INTO %1$s.outbox (id, kind, payload) VALUES ($1, $2, $3)",
	.nargs = 3,
	.argtypes = {UUIDOID, TEXTOID, JSONBOID}
};

/* the same where Citus distributes outbox by bucket (event_bucket.c) */
static OknoPlan insert_event_bucket_plan = {
	.sql =
	"INSERT INTO %1$s.outbox (id, kind, payload, " OKNO_OUTBOX_BUCKET_COLUMN ")"
	" VALUES ($1, $2, $3, $4)",
	.nargs = 4,
	.argtypes = {UUIDOID, TEXTOID, JSONBOID, INT4OID}
};

/*
 * Define okno.notify and register the wake-up's callbacks (wake.c).
 */
void
okno_outbox_init(void)
{
	DefineCustomBoolVariable("okno.notify",
							 "Sends NOTIFY okno_outbox when an event is written or made due again.",
							 "PostgreSQL serialises the commits of notifying transactions; "
							 "with this off (the default), relays find events by polling.",
							 &notify_enabled,
							 false,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	okno_wake_init();
}

/*
 * A new event id, UUID version 7.
 */
void
okno_new_event_id(pg_uuid_t *id)
{
	uint8		rnd[8];

	if (!pg_strong_random(rnd, sizeof(rnd)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate random values")));
	uuid7_generate(&event_id_state, okno_now_unix_us(), rnd, id->data);
}

/*
 * Insert the event id of this kind with this payload, as a plain INSERT
 * (the caller has refused INSTEAD rules on outbox); a trigger that keeps it
 * from being stored is an error, never an event silently lost.  order_key
 * is the event's order key (a booking's id, as text, for okno's kinds),
 * which gives its bucket where outbox has them.  The caller is connected
 * to SPI.
 */
void
okno_store_event(pg_uuid_t *id, const char *kind, Jsonb *payload, const char *order_key)
{
	Datum		values[4];
	int			rc;

	values[0] = UUIDPGetDatum(id);
	values[1] = PointerGetDatum(cstring_to_text(kind));
	values[2] = JsonbPGetDatum(payload);
	if (okno_binding()->outbox_buckets)
	{
		values[3] = Int32GetDatum(okno_event_bucket(order_key, id));
		rc = SPI_execute_plan(okno_plan(&insert_event_bucket_plan), values, NULL, false, 0);
	}
	else
		rc = SPI_execute_plan(okno_plan(&insert_event_plan), values, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_INSERT, "outbox insert");
	if (SPI_processed != 1)
		okno_error_not_stored(OKNO_REL_OUTBOX, "event");
	/* the named subscribers' rows, where Citus has them (fan_out.c) */
	if (okno_binding()->outbox_buckets)
		okno_fan_out_event(id, DatumGetInt32(values[3]), kind, order_key);
}

/*
 * Insert a new event of this kind with this payload (and order_key, see
 * okno_store_event) and queue the NOTIFY.
 */
void
okno_insert_event(const char *kind, Jsonb *payload, const char *order_key)
{
	pg_uuid_t  *id = palloc(sizeof(pg_uuid_t));

	okno_refuse_instead_rules(OKNO_REL_OUTBOX, "event");
	okno_new_event_id(id);
	okno_store_event(id, kind, payload, order_key);
	okno_notify();
}

/*
 * An event is (or will be, at commit) due: wake the relays waiting in
 * okno_wait at commit, and queue NOTIFY okno_outbox if okno.notify is on.
 */
void
okno_notify(void)
{
	okno_wake_at_commit();
	if (notify_enabled)
		Async_Notify(OKNO_NOTIFY_CHANNEL, "");
}
