/*-------------------------------------------------------------------------
 *
 * event_bucket.c
 *	  An event's bucket, where Citus distributes outbox by one: the
 *	  function of its order key that pure/bucket.c computes, for okno's
 *	  own inserts and, as okno_outbox_bucket(text), for SQL.
 *
 * Citus routes an INSERT by the value of the distribution column, which it
 * needs before the row reaches a shard: no default or trigger can compute
 * it from the row's other columns there (a generated column cannot be a
 * distribution column).  So whoever writes an event writes its bucket:
 * okno's inserts do (event.c, emit.c), and an application that writes
 * outbox rows itself writes okno_outbox_bucket(COALESCE(the event's order
 * key, its id as text)) — README, "Scaling out with Citus".  An event
 * without an order key has its id's bucket: such events have no order to
 * keep, and spread over the shards.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/uuid.h"

#include "outbox/outbox.h"
#include "pure/bucket.h"

PG_FUNCTION_INFO_V1(okno_outbox_bucket);

/*
 * The bucket of an event whose order key is key (NULL: none, then its id's).
 */
int32
okno_event_bucket(const char *key, const pg_uuid_t *id)
{
	char	   *idtext;
	int32		bucket;

	if (key != NULL)
		return okno_bucket_of(key, strlen(key));
	idtext = DatumGetCString(DirectFunctionCall1(uuid_out, UUIDPGetDatum(id)));
	bucket = okno_bucket_of(idtext, strlen(idtext));
	pfree(idtext);
	return bucket;
}

/*
 * okno_outbox_bucket(order_key text) RETURNS integer
 */
Datum
okno_outbox_bucket(PG_FUNCTION_ARGS)
{
	text	   *key = PG_GETARG_TEXT_PP(0);

	PG_RETURN_INT32(okno_bucket_of(VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key)));
}
