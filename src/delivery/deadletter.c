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
 * discard, for another its okno_delivery.delivered_at; the record is what
 * tells it from a delivery (okno_verify checks that the two agree), and
 * okno_purge leaves the records alone.
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

static OknoPlan discard_record_plan = {
	.sql =
	"INSERT INTO %1$s.okno_discarded (event_id, subscriber, kind, payload, attempts,"
	" last_error, parked_at, discarded_at, discarded_by)"
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
	.nargs = 9,
	.argtypes = {UUIDOID, TEXTOID, TEXTOID, JSONBOID, INT4OID, TEXTOID,
	TIMESTAMPTZOID, TIMESTAMPTZOID, NAMEOID}
};

/*
 * okno_requeue_parked(subscriber text DEFAULT NULL, kind text DEFAULT NULL,
 *					   error_like text DEFAULT NULL,
 *					   parked_before timestamptz DEFAULT NULL) RETURNS bigint
 */
Datum
okno_requeue_parked(PG_FUNCTION_ARGS)
{
	const OknoDeliveryRoutine *routines[] = {&okno_default_routine, &okno_named_routine};
	const OknoDeliveryRoutine *chosen = NULL;
	Datum		values[4];
	char		nulls[4];
	bool		all = PG_ARGISNULL(0);
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
	/* every subscriber when NULL ($4 NULL too) */
	if (all)
		nulls[3] = 'n';
	else
		chosen = okno_delivery_routine(okno_subscriber_of(fcinfo, 0, "okno_requeue_parked()"),
									   &values[3], &nulls[3]);
	if (okno_binding()->citus[OKNO_REL_OUTBOX])
	{
		/*
		 * Shard by shard where outbox is distributed by bucket
		 * (drain_buckets.c), the named subscribers' too where Citus has
		 * them; the default subscriber's as on one server where outbox is
		 * in one shard
		 */
		okno_require_outbox_buckets(okno_binding(), "okno_requeue_parked()");
		if (chosen == &okno_named_routine)
			okno_refuse_on_citus("okno_requeue_parked() with a subscriber");
		if (okno_binding()->outbox_buckets)
		{
			if (all || chosen == &okno_bucket_routine)
				n = okno_outbox_shards_exec(okno_bucket_routine.requeue_parked, values, nulls,
											SPI_OK_UPDATE, "outbox bulk requeue");
			if ((all && okno_named_on_citus()) || chosen == &okno_named_bucket_routine)
				n += okno_outbox_shards_exec(okno_named_bucket_routine.requeue_parked, values,
											 nulls, SPI_OK_UPDATE, "subscribers' bulk requeue");
		}
		else
			n = okno_delivery_exec(&okno_one_shard_routine, okno_one_shard_routine.requeue_parked,
								   values, nulls, 4, false, SPI_OK_UPDATE, "outbox bulk requeue");
	}
	else
		for (i = 0; i < (int) lengthof(routines); i++)
			if (all || routines[i] == chosen)
				n += okno_delivery_exec(routines[i], routines[i]->requeue_parked, values, nulls,
										4, false, SPI_OK_UPDATE, "outbox bulk requeue");
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
 * Keep the record of a discard in okno_discarded: the parked event as the
 * discard lock read it (the current SPI result: kind, payload, attempts,
 * last error, parked_at), for subscriber, by caller, at now.
 */
static void
record_discard(pg_uuid_t *id, const char *subscriber, Name caller, TimestampTz now)
{
	Datum		values[9];
	char		nulls[9];
	int			rc;
	int			i;

	memset(nulls, ' ', sizeof(nulls));
	values[0] = UUIDPGetDatum(id);
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
	const char *subscriber;
	const OknoDeliveryRoutine *r;
	Datum		values[3];
	char		nulls[3];
	TimestampTz now;
	OknoGuard	guard;
	Name		caller;

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
	nulls[0] = ' ';
	r = okno_delivery_routine(subscriber, &values[1], &nulls[1]);
	if (okno_delivery_exec(r, r->discard_lock, values, nulls, 2, false, SPI_OK_SELECT,
						   "outbox discard lock") == 0)
	{
		okno_spi_finish();
		okno_guard_end(&guard);
		PG_RETURN_BOOL(false);
	}

	/* the record: the event as it was, then when and by whom; then done */
	now = GetCurrentTimestamp();
	record_discard(id, subscriber, caller, now);
	values[2] = TimestampTzGetDatum(now);
	nulls[2] = ' ';
	if (okno_delivery_exec(r, r->discard_done, values, nulls, 3, false, SPI_OK_UPDATE,
						   "outbox discard") != 1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the discarded event was not marked done in table \"%s.%s\"",
						okno_schema_name(), r->table),
				 errdetail("A BEFORE trigger or a rule on the table kept the row from being updated."),
				 errhint("Let okno's updates of %s through.", r->table)));
	okno_spi_finish();
	okno_guard_end(&guard);

	/* the later events of its booking are free now */
	okno_wake_at_commit();
	okno_drain_forget_cursor();
	PG_RETURN_BOOL(true);
}
