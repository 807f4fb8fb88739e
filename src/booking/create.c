/*-------------------------------------------------------------------------
 *
 * create.c
 *	  okno_create_booking(actor, key, payload): the contract's steps, in order.
 *
 *   1. the key rule                                  invalid_key
 *   2. the payload, strictly                         invalid_payload
 *   3. the request's form (okno_canonical) and its fingerprint
 *   4. the caller may read keys (SELECT), then       42501
 *      the course's advisory lock on actor:key       (okno.key_wait off:
 *                                                    request_in_progress)
 *   5. look up (actor, key): replay, or             key_reused
 *      (4 and 5 are every key's contract, keys/contract.c, over bookings'
 *      store of keys, key_lookup.c;
 *      a key stored by the course's own service is compared in its form,
 *      fingerprint version 0); the caller may store  42501
 *      keys (INSERT), and a key purged into a        key_expired
 *      tombstone
 *   6. actor and resource exist                      actor_missing,
 *                                                    resource_missing
 *      insert booking, key and event; NOTIFY         slot_busy
 *      (without a plan, direct_write.c, under the snapshot of one statement,
 *      where that is the statements' equal by construction; otherwise
 *      sql_write.c's statements, one INSERT per row, each row checked to be
 *      stored; where Citus has idempotency, the key first, its row the
 *      arbiter between nodes: a claim that meets another request's key
 *      waits for it and then goes back to step 5's lookup)
 *   7. return the card (stored and returned as one datum)
 *
 * Everything runs in the caller's transaction: no commit, no
 * subtransaction.  An error anywhere aborts the caller's transaction (or
 * its subtransaction), so nothing of a failed attempt remains and the key
 * can be used again later.  Errors raised by the inserts are translated
 * into domain errors and raised again at once; nothing touches the
 * database between catching and raising.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "base/base.h"
#include "booking/booking.h"
#include "keys/keys.h"
#include "outbox/outbox.h"

PG_FUNCTION_INFO_V1(okno_create_booking);
PG_FUNCTION_INFO_V1(okno_create_booking_result);

/*
 * Called in PG_CATCH around the inserts: raise the domain error an
 * integrity error stands for, or return so that the caller re-throws it.
 */
static void
translate_store_error(MemoryContext cxt, int32 actor, const char *keystr,
					  int32 resource_id, const char *schema,
					  const OknoBinding *b)
{
	ErrorData  *edata;
	const char *con;

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	con = okno_error_constraint(edata, b->citus[OKNO_REL_BOOKINGS] ||
								b->citus[OKNO_REL_IDEMPOTENCY] ||
								b->citus[OKNO_REL_OUTBOX]);

	/* (the names are those the binding found: "" never matches) */
	switch (edata->sqlerrcode)
	{
		case ERRCODE_EXCLUSION_VIOLATION:
			if (strcmp(con, OKNO_OVERLAP_CONSTRAINT) == 0)
			{
				FlushErrorState();
				okno_error_slot_busy(resource_id, schema);
			}
			break;
		case ERRCODE_UNIQUE_VIOLATION:
			/* only a writer that skips the advisory lock can get here */
			if (con[0] != '\0' && strcmp(con, b->con_names[OKNO_CON_KEY_UNIQUE]) == 0)
			{
				OknoKeyRef	ref = {.actor = actor, .key = keystr};

				FlushErrorState();
				okno_error_concurrent_request(okno_key_owner(&ref), keystr);
			}
			break;
		case ERRCODE_FOREIGN_KEY_VIOLATION:
			/* the actor or resource was deleted after we checked */
			if (con[0] != '\0' &&
				(strcmp(con, b->con_names[OKNO_CON_BOOKING_ACTOR]) == 0 ||
				 strcmp(con, b->con_names[OKNO_CON_KEY_ACTOR]) == 0))
			{
				FlushErrorState();
				okno_error_actor_missing(actor, false);
			}
			if (con[0] != '\0' && strcmp(con, b->con_names[OKNO_CON_BOOKING_RESOURCE]) == 0)
			{
				FlushErrorState();
				okno_error_resource_missing(resource_id);
			}
			break;
		default:
			break;
	}
	FreeErrorData(edata);
}

/*
 * Steps 6 and 7: insert the booking, its key and its event, without a plan
 * where that is the statements' equal (direct_write.c), else with the statements
 * (sql_write.c); queue the NOTIFY; return the card (allocated in cxt).
 * Where Citus distributes idempotency the key is claimed first (sql_write.c):
 * NULL when another request committed the key while this one waited for
 * it, with nothing written.
 */
static Jsonb *
create_new(const OknoKeyRef *ref, text *key, const OknoBookingIn *in,
		   const char *fingerprint, MemoryContext cxt)
{
	Jsonb	   *volatile card = NULL;
	pg_uuid_t	event_id;
	char	   *schema;
	OknoBinding *binding;

	okno_lock_resource(in->resource_id);
	schema = MemoryContextStrdup(cxt, okno_schema_name());
	/* a copy: an invalidation while the inserts run may bind again */
	binding = MemoryContextAlloc(cxt, sizeof(OknoBinding));
	memcpy(binding, okno_binding(), sizeof(OknoBinding));
	okno_new_event_id(&event_id);

	PG_TRY();
	{
		Jsonb	   *stored;

		if (!okno_insert_direct(ref->actor, in, key, fingerprint, &event_id, cxt, &stored))
			stored = okno_insert_sql(ref, in, key, fingerprint, &event_id,
									 binding->citus[OKNO_REL_IDEMPOTENCY], cxt);
		card = stored;
	}
	PG_CATCH();
	{
		translate_store_error(cxt, ref->actor, ref->key, in->resource_id, schema, binding);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (card != NULL)
		okno_notify();
	return card;
}

/*
 * The whole contract; sets *replayed.  Shared by okno_create_booking and
 * okno_create_booking_result.
 */
static Jsonb *
create_booking(FunctionCallInfo fcinfo, const char *fname, bool *replayed)
{
	MemoryContext cxt = CurrentMemoryContext;
	bool		actor_isnull = PG_ARGISNULL(0);
	int32		actor = actor_isnull ? 0 : PG_GETARG_INT32(0);
	text	   *key = PG_ARGISNULL(1) ? NULL : PG_GETARG_TEXT_PP(1);
	Jsonb	   *payload = PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2);
	OknoBookingIn in;
	char		fingerprint[OKNO_FINGERPRINT_LEN + 1];
	char	   *keystr;
	Jsonb	   *result;
	OknoGuard	guard;
	OknoKeyRef	ref;
	OknoBookingRequest request;

	PreventCommandIfReadOnly(fname);

	/* 1, 2, 3: pure checks and the fingerprint, before any lock */
	okno_check_key(key);
	okno_parse_payload(payload, &in);
	okno_fingerprint_hex(&in, OKNO_FINGERPRINT_VERSION, fingerprint);
	keystr = text_to_cstring(key);

	/* a null actor has no scope to lock or look up: it cannot exist */
	if (actor_isnull)
		okno_error_actor_missing(0, true);

	/* 4, the course's request lock */
	ref.operation = NULL;
	ref.scope = NULL;
	ref.actor = actor;
	ref.key = keystr;
	okno_key_lock(&okno_booking_keys, &ref);

	okno_guard_begin(&guard);
	okno_spi_connect();
	/* before any lock: a subscription may wait for the event's writer */
	okno_fan_out_lock();

	/*
	 * 5: replay, key_reused, concurrent_request, key_expired, or new; where
	 * Citus distributes idempotency, the key's claim is the lookup
	 * (keys/contract.c), and a new key's tombstone is checked once claimed
	 */
	request.key = key;
	request.in = &in;
	request.fingerprint = fingerprint;
	if (okno_binding()->citus[OKNO_REL_IDEMPOTENCY] &&
		okno_key_before_claim(&okno_booking_keys))
		result = NULL;
	else
		result = okno_key_replay(&okno_booking_keys, &ref, &request, cxt);
	*replayed = (result != NULL);
	if (result == NULL)
		result = create_new(&ref, key, &in, fingerprint, cxt);
	if (result == NULL)
	{
		/* the key's claim lost on Citus: the key committed meanwhile */
		result = okno_key_replay(&okno_booking_keys, &ref, &request, cxt);
		if (result == NULL)
			okno_error_not_stored(OKNO_REL_IDEMPOTENCY, "idempotency key");
		*replayed = true;
	}

	okno_spi_finish();
	okno_guard_end(&guard);

	return result;
}

/*
 * okno_create_booking(actor integer, key text, payload jsonb) RETURNS jsonb
 */
Datum
okno_create_booking(PG_FUNCTION_ARGS)
{
	bool		replayed;

	PG_RETURN_JSONB_P(create_booking(fcinfo, "okno_create_booking()", &replayed));
}

/*
 * okno_create_booking_result(actor integer, key text, payload jsonb,
 *							  OUT card jsonb, OUT replayed boolean)
 *
 * The same, telling a replay from a creation, so an HTTP layer can answer
 * a replay with "Idempotent-Replayed: true".
 */
Datum
okno_create_booking_result(PG_FUNCTION_ARGS)
{
	bool		replayed;
	Jsonb	   *response = create_booking(fcinfo, "okno_create_booking_result()", &replayed);

	PG_RETURN_DATUM(okno_key_result(fcinfo, response, replayed));
}
