/*-------------------------------------------------------------------------
 *
 * fan_out.c
 *	  Where Citus has okno's named subscribers (okno_distribute_own_tables()
 *	  lays okno_subscriber out as a reference table and okno_delivery by
 *	  bucket with outbox): each event's rows of delivery state, written with
 *	  the event (docs/citus/SUBSCRIBERS.md).
 *
 * On one server a named subscriber's drain copies the events committed
 * since its last look, judged by the transaction ids that wrote them
 * (delivery/drain_subscriber.c).  A cluster has one transaction id counter
 * per node, so there the writer fans out instead: okno_store_event and
 * okno_emit write, beside the event, one row of okno_delivery per named
 * subscriber, in the event's bucket (so in its shard, on the node Citus
 * already writes the event to: one more statement on that connection, one
 * multi-row INSERT), and none where there is no named subscriber.  Rows
 * of the application's own INSERTs into outbox are not written: on a
 * cluster, named subscribers receive the events okno writes (README).
 *
 * Which subscribers: those committed when the writer reads the list,
 * after the event's key's turn (emit.c), in the latest snapshot whatever
 * the isolation level.  okno_subscribe and okno_unsubscribe lock
 * okno_subscriber on every node (LOCK TABLE, which Citus sends to each) in
 * EXCLUSIVE mode; a writer holds ROW SHARE on its own node's from before
 * any other lock of its call to the end of its transaction.  So a
 * subscription is a point in every writer's order: a writer that read the
 * list without it finished on its node before the subscription could
 * begin there, and every writer that reads after it began waits for its
 * commit.  Of one key's events, then, a subscriber receives every one
 * written after the first it receives.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/uuid.h"

#include "base/base.h"
#include "outbox/outbox.h"

#define SUBSCRIBER_TABLE	"okno_subscriber"
#define DELIVERY_TABLE		"okno_delivery"

/* the subscribers, by name */
static OknoPlan subscribers_plan = {
	.sql =
	"SELECT u.name FROM %1$s.okno_subscriber AS u ORDER BY u.name",
	.nargs = 0
};

/*
 * The rows of n subscribers: $1 the bucket, $2 the event's id, $3 its
 * order key, $4 whether it is a booking's first event, $5 ... the names.
 * A plan for each n up to FAN_OUT_CHUNK, made at its first use.
 */
#define FAN_OUT_FIXED	4
#define FAN_OUT_CHUNK	((int) lengthof(((OknoPlan *) NULL)->argtypes) - FAN_OUT_FIXED)
static OknoPlan fan_out_plans[FAN_OUT_CHUNK];

/* okno_delivery's columns, only to learn whether Citus knows the table */
static const OknoDirectCols delivery_cols = {
	.ncols = 1,
	.names = {"subscriber"}
};

/*
 * Whether Citus has okno's named subscribers: okno_delivery is a Citus
 * table (okno_distribute_own_tables() distributes it only with outbox
 * distributed by bucket).  Derived again when the table changes.
 */
bool
okno_named_on_citus(void)
{
	Oid			relid = okno_relid_by_name(DELIVERY_TABLE);

	return OidIsValid(relid) && okno_direct_rel(relid, &delivery_cols)->citus;
}

/*
 * A writer's share of okno_subscriber on its node, to the end of the
 * transaction (see the top); nothing where the subscribers are not
 * Citus's.  Writers take it before any other lock of their call, so that
 * a subscription waiting for them never waits on a writer that waits for
 * it.
 */
void
okno_fan_out_lock(void)
{
	if (okno_binding()->outbox_buckets && okno_named_on_citus())
		LockRelationOid(okno_relid_by_name(SUBSCRIBER_TABLE), RowShareLock);
}

/* the plan of n rows */
static OknoPlan *
fan_out_plan(int n)
{
	OknoPlan   *p = &fan_out_plans[n - 1];

	Assert(n >= 1 && n <= FAN_OUT_CHUNK);
	if (p->sql == NULL)
	{
		StringInfoData sql;
		int			i;

		initStringInfo(&sql);
		appendStringInfoString(&sql,
							   "INSERT INTO %1$s.okno_delivery"
							   " (bucket, subscriber, event_id, " OKNO_DELIVERY_KEY ", first) VALUES");
		p->argtypes[0] = INT4OID;
		p->argtypes[1] = UUIDOID;
		p->argtypes[2] = TEXTOID;
		p->argtypes[3] = BOOLOID;
		for (i = 0; i < n; i++)
		{
			appendStringInfo(&sql, "%s ($1, $%d, $2, $3, $4)", i > 0 ? "," : "",
							 FAN_OUT_FIXED + 1 + i);
			p->argtypes[FAN_OUT_FIXED + i] = TEXTOID;
		}
		p->nargs = FAN_OUT_FIXED + n;
		p->sql = MemoryContextStrdup(TopMemoryContext, sql.data);
		pfree(sql.data);
	}
	return p;
}

/*
 * Write the rows of the event id of kind (with order key order_key, NULL:
 * none), in bucket, for every named subscriber (see the top); nothing
 * where the subscribers are not Citus's.  The caller has written the event
 * and is connected to SPI.
 */
void
okno_fan_out_event(const pg_uuid_t *id, int32 bucket, const char *kind,
				   const char *order_key)
{
	Datum		values[FAN_OUT_FIXED + FAN_OUT_CHUNK];
	char		nulls[FAN_OUT_FIXED + FAN_OUT_CHUNK];
	SPITupleTable *names;
	uint64		nnames;
	uint64		done;
	int			rc;

	if (!okno_binding()->outbox_buckets || !okno_named_on_citus())
		return;
	okno_fan_out_lock();
	rc = SPI_execute_snapshot(okno_plan(&subscribers_plan), NULL, NULL,
							  GetLatestSnapshot(), InvalidSnapshot, false, false, 0);
	okno_check_spi(rc, SPI_OK_SELECT, "subscribers");
	names = SPI_tuptable;
	nnames = SPI_processed;

	memset(nulls, ' ', sizeof(nulls));
	values[0] = Int32GetDatum(bucket);
	values[1] = UUIDPGetDatum(id);
	if (order_key != NULL)
		values[2] = CStringGetTextDatum(order_key);
	else
		nulls[2] = 'n';
	values[3] = BoolGetDatum(strcmp(kind, OKNO_EVENT_BOOKING_CREATED) == 0);
	for (done = 0; done < nnames;)
	{
		int			n = (int) Min(nnames - done, (uint64) FAN_OUT_CHUNK);
		int			i;
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		for (i = 0; i < n; i++)
			values[FAN_OUT_FIXED + i] = SPI_getbinval(names->vals[done + i], names->tupdesc,
													  1, &isnull);
		rc = SPI_execute_plan(okno_plan(fan_out_plan(n)), values, nulls, false, 0);
		okno_check_spi(rc, SPI_OK_INSERT, "subscribers' delivery rows");
		done += n;
	}
	SPI_freetuptable(names);
}
