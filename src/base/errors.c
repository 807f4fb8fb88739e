/*-------------------------------------------------------------------------
 *
 * errors.c
 *	  Raise okno's domain errors, one helper each.
 *
 * Messages follow PostgreSQL's error message style guide: errmsg is a short
 * lower-case statement without a final period, the specifics go to DETAIL,
 * and HINT says what the caller can do.  slot_busy also carries the schema,
 * table and constraint names, as a violation of bookings_no_overlap would,
 * so clients that read the constraint name (as the course's service did)
 * keep working.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "utils/lsyscache.h"

#include "base/base.h"

void
okno_error_invalid_key(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_OKNO_INVALID_KEY),
			 errmsg("invalid idempotency key"),
			 errdetail("%s", detail),
			 errhint("Use 1 to 80 characters from A-Z, a-z, 0-9, \".\", \"_\" and \"-\".")));
	pg_unreachable();
}

void
okno_error_invalid_payload(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_OKNO_INVALID_PAYLOAD),
			 errmsg("invalid booking payload"),
			 errdetail("%s", detail),
			 errhint("Send a JSON object with exactly \"resource_id\", \"starts_at\" and \"ends_at\"; "
					 "write the times in RFC 3339 form with an offset, such as \"2026-12-01T10:00:00+03:00\".")));
	pg_unreachable();
}

void
okno_error_resource_missing(int32 resource_id)
{
	ereport(ERROR,
			(errcode(ERRCODE_OKNO_RESOURCE_MISSING),
			 errmsg("resource %d does not exist", resource_id)));
	pg_unreachable();
}

/*
 * owner names whose key it is, as a noun phrase in lower case ("actor 1",
 * "operation \"pay\" in scope \"t1\""): its first letter is capitalised
 * where it begins a sentence.
 */
static char *
sentence_start(const char *owner)
{
	char	   *s = pstrdup(owner);

	if (s[0] >= 'a' && s[0] <= 'z')
		s[0] = s[0] - 'a' + 'A';
	return s;
}

void
okno_error_key_reused(const char *owner, const char *key)
{
	ereport(ERROR,
			(errcode(ERRCODE_OKNO_KEY_REUSED),
			 errmsg("idempotency key \"%s\" was already used with a different payload", key),
			 errdetail("%s first used this key for a request whose canonical payload differs.",
					   sentence_start(owner)),
			 errhint("Retry with the original payload, or use a new key for a new request.")));
	pg_unreachable();
}

void
okno_error_slot_busy(int32 resource_id, const char *schema)
{
	ereport(ERROR,
			(errcode(ERRCODE_OKNO_SLOT_BUSY),
			 errmsg("the time slot is already booked"),
			 errdetail("Resource %d has a confirmed booking that overlaps the requested period.",
					   resource_id),
			 err_generic_string(PG_DIAG_SCHEMA_NAME, schema),
			 err_generic_string(PG_DIAG_TABLE_NAME, "bookings"),
			 err_generic_string(PG_DIAG_CONSTRAINT_NAME, OKNO_OVERLAP_CONSTRAINT)));
	pg_unreachable();
}

void
okno_error_actor_missing(int32 actor, bool isnull)
{
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_OKNO_ACTOR_MISSING),
				 errmsg("actor must not be null")));
	ereport(ERROR,
			(errcode(ERRCODE_OKNO_ACTOR_MISSING),
			 errmsg("actor %d does not exist", actor)));
	pg_unreachable();
}

/*
 * A booking that does not exist and one of another actor look the same:
 * never reveal that another actor's booking exists.
 */
void
okno_error_booking_missing(int64 booking_id, bool isnull)
{
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_OKNO_BOOKING_MISSING),
				 errmsg("booking id and actor must not be null")));
	ereport(ERROR,
			(errcode(ERRCODE_OKNO_BOOKING_MISSING),
			 errmsg("booking " INT64_FORMAT " does not exist", booking_id)));
	pg_unreachable();
}

void
okno_error_event_missing(const char *event_id)
{
	ereport(ERROR,
			(errcode(ERRCODE_OKNO_EVENT_MISSING),
			 errmsg("outbox event %s does not exist", event_id)));
	pg_unreachable();
}

void
okno_error_subscriber_missing(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_OKNO_SUBSCRIBER_MISSING),
			 errmsg("subscriber \"%s\" does not exist", name),
			 errhint("Pass the name of an existing subscriber, or \"%s\" for the default subscriber.", OKNO_DEFAULT_SUBSCRIBER)));
	pg_unreachable();
}

/*
 * The application's tables cannot serve okno (bind.c): detail lists every
 * difference, one line each with its fix; missing says whether a table is
 * missing altogether; fname, when one of the functions that create or
 * prepare the tables refuses them, names it (the list is then what it does
 * not mend).
 */
void
okno_error_tables_unfit(const char *schema, const char *detail, bool missing,
						const char *fname)
{
	ereport(ERROR,
			(errcode(ERRCODE_OKNO_TABLES_UNFIT),
			 errmsg("okno's tables in schema %s cannot serve it", schema),
			 errdetail("%s", detail),
			 fname != NULL ?
			 errhint("Change the tables as listed, as their owner, then call %s again: it adds the rest and changes nothing until then.", fname) :
			 missing ?
			 errhint("Create the missing tables with SELECT okno_create_tables(), as the role that is to own them, or change the tables as listed.") :
			 errhint("As the tables' owner, add what okno needs with SELECT okno_prepare_tables(), or change the tables as listed.")));
	pg_unreachable();
}

/*
 * Another transaction committed a request with this key after our snapshot
 * was taken (REPEATABLE READ or SERIALIZABLE): the only correct answer is to
 * retry the whole transaction, which will then see it and replay.
 */
void
okno_error_concurrent_request(const char *owner, const char *key)
{
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("could not serialize access due to a concurrent request with the same idempotency key"),
			 errdetail("The key \"%s\" of %s was stored by a transaction that committed after this transaction's snapshot was taken.",
					   key, owner),
			 errhint("Retry the transaction: the retry will replay the stored response.")));
	pg_unreachable();
}

/*
 * okno_purge removed the key's stored response and left a tombstone: the
 * retry of a request whose response is gone is answered, not run again.
 */
void
okno_error_key_expired(const char *owner, const char *key)
{
	ereport(ERROR,
			(errcode(ERRCODE_OKNO_KEY_EXPIRED),
			 errmsg("idempotency key \"%s\" has expired", key),
			 errdetail("okno_purge removed the response that %s stored under this key; only the key's tombstone is left, so the request is not run again.",
					   owner),
			 errhint("Use a new key for a new request.")));
	pg_unreachable();
}

/*
 * The key's first request has not ended: another transaction holds its
 * lock and okno.key_wait is off (mine = false), or this transaction
 * claimed the key and has not stored its response (mine = true).
 */
void
okno_error_request_in_progress(const char *owner, const char *key, bool mine)
{
	if (mine)
		ereport(ERROR,
				(errcode(ERRCODE_OKNO_REQUEST_IN_PROGRESS),
				 errmsg("a request with idempotency key \"%s\" is in progress", key),
				 errdetail("This transaction claimed the key of %s and has not stored its response.",
						   owner),
				 errhint("Store the response with okno_key_store() before the key is used again.")));
	ereport(ERROR,
			(errcode(ERRCODE_OKNO_REQUEST_IN_PROGRESS),
			 errmsg("a request with idempotency key \"%s\" is in progress", key),
			 errdetail("Another transaction holds the lock of the key of %s, and okno.key_wait is off.",
					   owner),
			 errhint("Retry later: once the first request has committed, a retry replays its response.")));
	pg_unreachable();
}

/*
 * Raise "NAME must not be null" (sqlerrcode: 22004, or 22023 where okno
 * has always answered that) unless argument argno of the call is given;
 * the hint, if any, is formatted only then.
 */
void
okno_require_arg(FunctionCallInfo fcinfo, int argno, const char *name,
				 int sqlerrcode, const char *hint_fmt,...)
{
	StringInfoData hint;

	if (!PG_ARGISNULL(argno))
		return;
	initStringInfo(&hint);
	for (;;)
	{
		va_list		args;
		int			needed;

		if (hint_fmt == NULL)
			break;
		va_start(args, hint_fmt);
		needed = appendStringInfoVA(&hint, hint_fmt, args);
		va_end(args);
		if (needed == 0)
			break;
		enlargeStringInfo(&hint, needed);
	}
	ereport(ERROR,
			(errcode(sqlerrcode),
			 errmsg("%s must not be null", name),
			 hint_fmt != NULL ? errhint("%s", hint.data) : 0));
}
