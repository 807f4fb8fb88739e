/*-------------------------------------------------------------------------
 *
 * drain_buckets.c
 *	  The default subscriber's drain where Citus distributes outbox by
 *	  bucket (README, "Scaling out with Citus"): one statement per shard.
 *
 * Citus plans a statement with FOR UPDATE SKIP LOCKED, or with the
 * held-back rule's correlated subquery, only when every outbox it names is
 * pruned to one shard (docs/citus/DRAINS.md).  So the drain is okno's
 * drain (drain_outbox.c) run once per shard, each reference to outbox
 * restricted to that shard's buckets (bucket = ANY of them, a constant of
 * a custom plan, which Citus prunes to the shard), with the time passed in
 * ($4: Citus refuses clock_timestamp(), VOLATILE, in an UPDATE).  An
 * event's bucket is a function of its order key alone (event_bucket.c),
 * so every event of one key is in one shard, and the rule that holds a
 * key's later events back while an earlier one is undelivered is checked
 * within the shard, as on one server.  A key's order is kept; nothing is
 * promised across keys, as no distributed engine does.
 *
 * Which buckets a shard holds comes from Citus's metadata (outbox's
 * shards.c).  The shards placed on this node come first, so
 * that a relay connected to a worker drains its own shards first with
 * statements Citus runs locally; among each, the start turns from call to
 * call, so that no shard waits behind another's backlog.
 *
 * A named subscriber's drain, where Citus has the named subscribers
 * (okno_distribute_own_tables(): okno_delivery distributed by bucket with
 * outbox, each event's rows written with it, outbox/fan_out.c), is the
 * same walk over the same shards with a statement on okno_delivery,
 * joined to outbox in the shard.
 *
 * Where Citus keeps outbox in one shard (a distributed schema's table,
 * schema mode: README), the same drain runs on that one shard, each
 * statement without the bucket restriction (the table has no buckets):
 * Citus plans it onto the shard's node as it is, given the time as for
 * buckets and planned for each call.
 *
 * A batch is all the events handed out by one call, in id order, as one
 * server's are: each shard's rows are sorted by id, the batch is sorted
 * again.  The caller's transaction is the delivery, as on one server: if
 * it rolls back, nothing was delivered (Citus commits a batch of several
 * nodes' shards with two-phase commit, one node's with one).  There is no
 * cursor and no hint (drain_outbox.c): each statement scans its shard's
 * pending events from the start.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/uuid.h"

#include "base/base.h"
#include "outbox/outbox.h"
#include "delivery/delivery.h"

/*
 * The buckets of each of outbox's shards, and whether it is placed on this
 * node, in the shards' order ($1: outbox; the metadata is Citus's, in
 * pg_catalog).  A shard without a hash range (outbox in one shard) holds
 * every bucket.
 */
/*
 * drain_outbox.c's drain of one shard: $1 at most, after id $2 (the nil
 * UUID: from the start), the shard's buckets $3, the time $4.  Planned for
 * each call (a custom plan): Citus cannot plan it with the parameters left
 * in.
 */
#define B_IN(e) " AND " e "." OKNO_OUTBOX_BUCKET_COLUMN " OPERATOR(pg_catalog.=) ANY ($3)"
#define SHARD_ARGS \
	.nargs = 4, \
	.argtypes = {INT4OID, UUIDOID, INT4ARRAYOID, TIMESTAMPTZOID}, \
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
static OknoPlan drain_shard_plan = {
	.sql = OKNO_SQL_DRAIN_AT(OKNO_F_CURRENT, "", "$4", B_IN),
	SHARD_ARGS
};

/* the same where outbox is in one shard: no buckets ($3 unused) */
#define DRAIN_ONE_SHARD_SQL(F) OKNO_SQL_DRAIN_AT(F, "", "$4", OKNO_SQL_ANY_BUCKET)
static OknoPlan drain_one_shard_plan = {
	OKNO_PLAN_FORMS(DRAIN_ONE_SHARD_SQL),
	SHARD_ARGS
};

/*
 * Whether one shard has an event due that no open drain holds (okno_wait's
 * check): its first, locked as a drain would lock it, skipping the rows
 * open drains hold, and let go when the check's transaction ends.  (On one
 * server wait.c tells a held row by its xmax; a shard's xmax is another
 * node's transaction.)
 */
#define DUE_SHARD_SQL(F, in) \
	"SELECT p.id FROM %1$s.outbox AS p" \
	" WHERE" OKNO_SQL_OUTBOX_DUE_AT(F, "p", "$2", "$4", in("q")) in("p") \
	" ORDER BY p.id LIMIT $1 FOR UPDATE SKIP LOCKED"
static OknoPlan due_shard_plan = {
	.sql = DUE_SHARD_SQL(OKNO_F_CURRENT, B_IN),
	SHARD_ARGS
};

#define DUE_ONE_SHARD_SQL(F) DUE_SHARD_SQL(F, OKNO_SQL_ANY_BUCKET)
static OknoPlan due_one_shard_plan = {
	OKNO_PLAN_FORMS(DUE_ONE_SHARD_SQL),
	SHARD_ARGS
};

/*
 * A named subscriber's drain of one shard, where Citus has the named
 * subscribers (okno_delivery distributed by bucket with outbox, its rows
 * written with each event: outbox/fan_out.c): the arguments above ($2
 * unused) and the subscriber $5.  Every reference to either table carries
 * the shard's buckets, so that Citus plans it as one task on the shard's
 * node (docs/citus/SUBSCRIBERS.md); the rows handed out are marked
 * delivered (one server deletes the rows of events that never failed:
 * here a row is kept from its event's write to its purge).
 */
#define N_IN(e) " AND " e ".bucket OPERATOR(pg_catalog.=) ANY ($3)"
#define NAMED_ARGS \
	.nargs = 5, \
	.argtypes = {INT4OID, UUIDOID, INT4ARRAYOID, TIMESTAMPTZOID, TEXTOID}, \
	.cursor_options = CURSOR_OPT_CUSTOM_PLAN
#define NAMED_PICK \
	"SELECT p.bucket, p.event_id FROM %1$s.okno_delivery AS p" \
	" WHERE" OKNO_SQL_DELIVERY_DUE_AT(OKNO_F_CURRENT, "p", "$5", "$4", N_IN("q")) N_IN("p") \
	" ORDER BY p.event_id LIMIT $1 FOR UPDATE SKIP LOCKED"
static OknoPlan drain_named_shard_plan = {
	.sql =
	"WITH p AS MATERIALIZED (" NAMED_PICK "),"
	" d AS (UPDATE %1$s.okno_delivery AS o SET delivered_at = $4 FROM p"
	"  WHERE o.subscriber OPERATOR(pg_catalog.=) $5" N_IN("o")
	"    AND o.bucket OPERATOR(pg_catalog.=) p.bucket AND o.event_id OPERATOR(pg_catalog.=) p.event_id"
	"  RETURNING o.bucket, o.event_id, o.attempts)"
	" SELECT d.event_id, e.kind::pg_catalog.text AS kind, e.payload, d.attempts"
	"   FROM d JOIN %1$s.outbox AS e"
	"     ON e." OKNO_OUTBOX_BUCKET_COLUMN " OPERATOR(pg_catalog.=) ANY ($3)"
	"    AND e." OKNO_OUTBOX_BUCKET_COLUMN " OPERATOR(pg_catalog.=) d.bucket"
	"    AND e.id OPERATOR(pg_catalog.=) d.event_id"
	"  ORDER BY d.event_id",
	NAMED_ARGS
};

/* whether one shard has an event due for the subscriber (okno_wait's) */
static OknoPlan due_named_shard_plan = {
	.sql = NAMED_PICK,
	NAMED_ARGS
};

/*
 * The statements of a shard for the layout: by bucket, or outbox in one
 * shard
 */
static OknoPlan *
shard_plan(OknoPlan *by_bucket, OknoPlan *one_shard)
{
	return okno_binding()->outbox_one_shard ? one_shard : by_bucket;
}

/* outbox's shards, as shard_buckets_plan finds them */
/*
 * The drains' order of outbox's shards (shards.c): this node's first (the
 * first nhere), each part from the call's turn on, so that a relay
 * connected to a worker drains its own shards first and no shard waits
 * behind another's backlog.
 */
static struct
{
	uint64		generation;		/* of the shards it was made for */
	MemoryContext cxt;
	int		   *drain_order;
	uint32		turn;			/* where the next call starts */
} order;

/* one event handed out, until the batch is sorted */
typedef struct Handed
{
	pg_uuid_t	id;
	Datum		values[4];
	bool		nulls[4];
} Handed;

/*
 * outbox's shards, with the drains' order made for them.
 */
static const OknoOutboxShards *
find_shards(void)
{
	const OknoOutboxShards *sh = okno_outbox_shards();
	int			j = 0;
	int			k;

	if (order.cxt != NULL && order.generation == sh->generation)
		return sh;
	if (order.cxt == NULL)
		order.cxt = AllocSetContextCreate(TopMemoryContext, "okno drain order",
										  ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(order.cxt);
	order.drain_order = MemoryContextAllocZero(order.cxt, sizeof(int) * Max(sh->nshards, 1));
	for (k = 0; k < sh->nshards; k++)
		if (sh->shard[k].here)
			order.drain_order[j++] = k;
	/* then the others, in the shards' order */
	for (k = 0; k < sh->nshards; k++)
		if (!sh->shard[k].here)
			order.drain_order[j++] = k;
	order.generation = sh->generation;
	return sh;
}

/* the k-th shard of a call: this node's first, each from its turn on */
static const OknoOutboxShard *
shard_of_call(const OknoOutboxShards *sh, int k)
{
	int			nhere = sh->nhere;
	int			nelse = sh->nshards - nhere;

	if (k < nhere)
		return &sh->shard[order.drain_order[(k + order.turn) % nhere]];
	return &sh->shard[order.drain_order[nhere + (k - nhere + order.turn) % nelse]];
}

/*
 * Run plan (a drain or a due check of a shard, above) on one shard: at
 * most max events, due at time now, for subscriber (a text; the named
 * subscribers' plans only); the rows are in SPI_tuptable.
 */
static void
run_shard(OknoPlan *plan, const OknoOutboxShard *shard, int32 max, TimestampTz now,
		  Datum subscriber)
{
	pg_uuid_t	nil;
	Datum		args[5];
	int			rc;

	memset(&nil, 0, sizeof(nil));
	args[0] = Int32GetDatum(max);
	args[1] = UUIDPGetDatum(&nil);
	args[2] = shard->buckets;
	args[3] = TimestampTzGetDatum(now);
	args[4] = subscriber;
	rc = SPI_execute_plan(okno_plan(plan), args, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_SELECT, "outbox of a shard");
}

/*
 * Drain up to max events of one shard with plan at time now (for
 * subscriber, as run_shard), appending them to handed (of room for *n +
 * max) in outcxt; returns how many.
 */
static uint64
drain_shard(OknoPlan *plan, const OknoOutboxShard *shard, int32 max, TimestampTz now,
			Datum subscriber, Handed *handed, uint64 *n, int ncols, MemoryContext outcxt)
{
	uint64		i;

	run_shard(plan, shard, max, now, subscriber);

	for (i = 0; i < SPI_processed; i++)
	{
		Handed	   *h = &handed[*n + i];
		MemoryContext oldcxt;
		int			col;

		CHECK_FOR_INTERRUPTS();
		oldcxt = MemoryContextSwitchTo(outcxt);
		for (col = 0; col < ncols; col++)
		{
			Form_pg_attribute att = TupleDescAttr(SPI_tuptable->tupdesc, col);
			Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
										  col + 1, &h->nulls[col]);

			h->values[col] = h->nulls[col] ? (Datum) 0 :
				datumCopy(d, att->attbyval, att->attlen);
		}
		MemoryContextSwitchTo(oldcxt);
		memcpy(&h->id, DatumGetUUIDP(h->values[0]), sizeof(pg_uuid_t));
	}
	*n += SPI_processed;
	return SPI_processed;
}

static int
handed_cmp(const void *a, const void *b)
{
	return memcmp(&((const Handed *) a)->id, &((const Handed *) b)->id, sizeof(pg_uuid_t));
}

/*
 * Drain up to max_events events due for subscriber (NULL: the default one)
 * into rsinfo's result set (made ready by the caller) and return how many,
 * shard by shard, as above.
 */
static uint64
drain_buckets(ReturnSetInfo *rsinfo, const char *subscriber, int32 max_events, int ncols)
{
	MemoryContext outcxt = CurrentMemoryContext;
	OknoPlan   *plan = subscriber != NULL ? &drain_named_shard_plan :
		shard_plan(&drain_shard_plan, &drain_one_shard_plan);
	Datum		name = subscriber != NULL ? CStringGetTextDatum(subscriber) : (Datum) 0;
	TimestampTz now = GetCurrentTimestamp();
	Handed	   *handed = palloc(sizeof(Handed) * max_events);
	uint64		n = 0;
	uint64		i;
	OknoGuard	guard;
	const OknoOutboxShards *sh;
	int			k;

	okno_guard_begin(&guard);
	okno_spi_connect();
	if (subscriber != NULL)
		okno_subscriber_check(subscriber);
	sh = find_shards();
	for (k = 0; k < sh->nshards && n < (uint64) max_events; k++)
		drain_shard(plan, shard_of_call(sh, k), max_events - (int32) n, now, name,
					handed, &n, ncols, outcxt);
	order.turn++;
	okno_spi_finish();
	okno_guard_end(&guard);

	qsort(handed, n, sizeof(Handed), handed_cmp);
	for (i = 0; i < n; i++)
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 handed[i].values, handed[i].nulls);
	return n;
}

/* the default subscriber's drain */
uint64
okno_drain_buckets(ReturnSetInfo *rsinfo, int32 max_events, int ncols)
{
	return drain_buckets(rsinfo, NULL, max_events, ncols);
}

/* a named subscriber's, where Citus has the named subscribers */
uint64
okno_drain_named_buckets(ReturnSetInfo *rsinfo, const char *subscriber, int32 max_events,
						 int ncols)
{
	Assert(subscriber != NULL);
	return drain_buckets(rsinfo, subscriber, max_events, ncols);
}

/*
 * Whether an event is due for subscriber (NULL: the default one) that no
 * open drain holds, on any shard (for okno_wait's check, in a transaction
 * of its own that the caller ends).  The caller is connected to SPI.
 */
bool
okno_buckets_due(const char *subscriber)
{
	TimestampTz now = GetCurrentTimestamp();
	const OknoOutboxShards *sh = find_shards();
	OknoPlan   *plan = subscriber != NULL ? &due_named_shard_plan :
		shard_plan(&due_shard_plan, &due_one_shard_plan);
	Datum		name = subscriber != NULL ? CStringGetTextDatum(subscriber) : (Datum) 0;
	int			k;

	for (k = 0; k < sh->nshards; k++)
	{
		CHECK_FOR_INTERRUPTS();
		run_shard(plan, shard_of_call(sh, k), 1, now, name);
		if (SPI_processed > 0)
			return true;
	}
	return false;
}
