/*-------------------------------------------------------------------------
 *
 * subscriber.c
 *	  Subscriber names: the rule they follow and the ones that exist.
 *
 * A subscriber is a recipient of the outbox's events with its own delivery
 * state.  Its name is 1 to 63 bytes of lower-case ASCII letters, digits,
 * "_" and "-", starting with a letter, so that it reads the same in SQL, in
 * a relay's command line and in a metric's label.  The default subscriber,
 * named "default", is the outbox's own delivery state (outbox.delivered_at,
 * attempts, available_at, parked_at): every function without a subscriber
 * argument serves it.
 *
 * An invalid name is invalid_parameter_value (22023); a valid name that
 * is not a subscriber is subscriber_missing (OKB09).
 *
 * okno_subscribe(name) adds a subscriber: a row of okno_subscriber whose
 * copied_snapshot is a snapshot taken as it subscribes, so that the
 * subscriber receives exactly the events committed after it
 * (drain_subscriber.c copies the events that snapshot does not see).  okno_unsubscribe(name)
 * removes the row and the subscriber's delivery state.
 *
 * What every subscriber has copied: okno_subscriber_horizon() gives the
 * oldest xmin of the subscribers' snapshots.  An event of a transaction
 * below it is copied by (or came before) every subscriber there is, and
 * every subscriber to come: the default subscriber's drain forgets its
 * created_xid once it delivers it (drain_outbox.c), so that the index
 * outbox_created_xid, partial on created_xid IS NOT NULL, holds only the
 * events subscribers may still have to copy.  For that to hold against a
 * subscriber being added meanwhile, okno_subscribe locks okno_subscriber
 * in EXCLUSIVE mode before it takes its snapshot, the horizon is read in
 * ROW SHARE mode (kept to the end of the transaction) and in the latest
 * snapshot: a subscription the read does not see begins after the
 * transaction that forgets has ended, and sees its events as committed.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"

#include "base/base.h"
#include "pure/name_rule.h"
#include "outbox/outbox.h"
#include "delivery/delivery.h"


#define OKNO_SUBSCRIBER_MAXLEN 63

#define OKNO_SUBSCRIBER_TABLE "okno_subscriber"

/*
 * The subscriber named by a function's argument, checked against the rule
 * (not whether it exists): a palloc'd C string.  fname names the function
 * in the hint.
 */
char *
okno_subscriber_arg(text *arg, const char *fname)
{
	char	   *name = text_to_cstring(arg);

	if (!okno_name_valid(name, strlen(name), OKNO_SUBSCRIBER_MAXLEN, "_-"))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid subscriber name \"%s\"", name),
				 errdetail("A subscriber name is 1 to %d characters: lower-case letters, digits, \"_\" and \"-\", starting with a letter.",
						   OKNO_SUBSCRIBER_MAXLEN),
				 errhint("Call %s with the name the subscriber was given, or \"%s\" for the default subscriber.",
						 fname, OKNO_DEFAULT_SUBSCRIBER)));
	return name;
}

/*
 * The subscriber argument argno of a function that has one (a NULL is
 * refused, the rule checked): NULL when it names the default subscriber,
 * else the name, whether or not such a subscriber exists.
 */
char *
okno_subscriber_named(FunctionCallInfo fcinfo, int argno, const char *fname)
{
	char	   *name;

	okno_require_arg(fcinfo, argno, "subscriber", ERRCODE_NULL_VALUE_NOT_ALLOWED,
					 "Pass a subscriber's name, or \"%s\" for the default subscriber.",
					 OKNO_DEFAULT_SUBSCRIBER);
	name = okno_subscriber_arg(PG_GETARG_TEXT_PP(argno), fname);
	if (strcmp(name, OKNO_DEFAULT_SUBSCRIBER) == 0)
		return NULL;
	return name;
}

/*
 * The same, and a named subscriber must exist (subscriber_missing
 * otherwise).  The caller is connected to SPI.
 */
char *
okno_subscriber_of(FunctionCallInfo fcinfo, int argno, const char *fname)
{
	char	   *name = okno_subscriber_named(fcinfo, argno, fname);

	if (name != NULL)
		okno_subscriber_check(name);
	return name;
}

static OknoPlan exists_plan = {
	.sql =
	"SELECT FROM %1$s.okno_subscriber WHERE name OPERATOR(pg_catalog.=) $1",
	.nargs = 1,
	.argtypes = {TEXTOID}
};

/*
 * subscriber_missing unless a subscriber of this name (not the default one)
 * exists.  The caller is connected to SPI.
 */
void
okno_subscriber_check(const char *name)
{
	Datum		arg = CStringGetTextDatum(name);
	int			rc;

	rc = SPI_execute_plan(okno_plan(&exists_plan), &arg, NULL, true, 1);
	okno_check_spi(rc, SPI_OK_SELECT, "subscriber lookup");
	if (SPI_processed == 0)
		okno_error_subscriber_missing(name);
}

/*
 * The start of the oldest transaction that another backend has open now,
 * or now if there is none.  An event committed after a subscription began
 * was written in a transaction that was open at the time or began later,
 * so its created_at (its transaction's start) is no earlier than this.
 * Two-phase transactions that are prepared are not counted: their start
 * is not known.
 */
static TimestampTz
oldest_open_transaction(void)
{
	TimestampTz oldest = GetCurrentTransactionStartTimestamp();
	int			n = pgstat_fetch_stat_numbackends();
	int			i;

	for (i = 1; i <= n; i++)
	{
		LocalPgBackendStatus *local = okno_local_beentry(i);
		TimestampTz start;

		if (local == NULL || local->backendStatus.st_procpid == MyProcPid)
			continue;
		start = local->backendStatus.st_xact_start_timestamp;
		if (start != 0 && start < oldest)
			oldest = start;
	}
	return oldest;
}

/*
 * okno_subscriber's OID (InvalidOid in an okno installed before 0.5.0), not
 * cached: its rows
 * change with every subscriber's drain, and the OIDs that schema.c caches make
 * every kept plan prepared again when their relation changes.
 */
static Oid
subscriber_table(void)
{
	return okno_relid_by_name(OKNO_SUBSCRIBER_TABLE);
}

/*
 * The horizon of the comment at the top into *horizon: the oldest xmin of
 * the subscribers' snapshots, or the largest xid8 when there is no
 * subscriber.  False when there is none to give: okno predates
 * subscribers, or a subscriber's snapshot was taken in another cluster (a
 * restore that its first drain has not rebased yet, drain_subscriber.c).
 *
 * okno_subscriber is read as a foreign-key check reads the table it
 * refers to, not as the caller: what the default subscriber's drain may
 * forget must not depend on what the caller may see of it.
 */
bool
okno_subscriber_horizon(FullTransactionId *horizon)
{
	Oid			relid = subscriber_table();
	Relation	rel;
	AttrNumber	system_att;
	AttrNumber	snapshot_att;
	Snapshot	snapshot;
	TableScanDesc scan;
	TupleTableSlot *slot;
	int64		system = (int64) GetSystemIdentifier();
	bool		bounded = true;

	if (!OidIsValid(relid))
		return false;
	system_att = get_attnum(relid, "copied_system");
	snapshot_att = get_attnum(relid, "copied_snapshot");
	if (system_att == InvalidAttrNumber || snapshot_att == InvalidAttrNumber)
		return false;

	*horizon = FullTransactionIdFromU64(PG_UINT64_MAX);
	rel = table_open(relid, RowShareLock);
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	slot = table_slot_create(rel, NULL);
	scan = table_beginscan(rel, snapshot, 0, NULL);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		Datum		d;
		bool		isnull;
		FullTransactionId xmin;

		CHECK_FOR_INTERRUPTS();
		d = slot_getattr(slot, system_att, &isnull);
		if (isnull || DatumGetInt64(d) != system)
		{
			bounded = false;
			break;
		}
		d = slot_getattr(slot, snapshot_att, &isnull);
		if (isnull)
		{
			bounded = false;
			break;
		}
		xmin = DatumGetFullTransactionId(DirectFunctionCall1(pg_snapshot_xmin, d));
		if (FullTransactionIdPrecedes(xmin, *horizon))
			*horizon = xmin;
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snapshot);
	/* the lock stays until the end of the transaction */
	table_close(rel, NoLock);
	return bounded;
}

static OknoPlan subscribe_plan = {
	.sql =
	"INSERT INTO %1$s.okno_subscriber AS u (name, subscribed_at, since, copied_snapshot,"
	" copied_system, copied_at)"
	" VALUES ($1, pg_catalog.now(), $2, pg_catalog.pg_current_snapshot(), $3, pg_catalog.now())"
	" ON CONFLICT (name) DO NOTHING",
	.nargs = 3,
	.argtypes = {TEXTOID, TIMESTAMPTZOID, INT8OID}
};

/*
 * The subscriber's row goes first: that waits for every drain that holds
 * it (FOR NO KEY UPDATE) and every failure report that writes a row for it
 * (FOR KEY SHARE), and keeps new ones from starting.  Its rows of okno_delivery
 * go next, in the latest snapshot, so that the rows those wrote go too,
 * whatever the isolation level.
 */
static OknoPlan unsubscribe_plan = {
	.sql =
	"DELETE FROM %1$s.okno_subscriber WHERE name OPERATOR(pg_catalog.=) $1",
	.nargs = 1,
	.argtypes = {TEXTOID}
};

static OknoPlan unsubscribe_state_plan = {
	.sql =
	"DELETE FROM %1$s.okno_delivery WHERE subscriber OPERATOR(pg_catalog.=) $1",
	.nargs = 1,
	.argtypes = {TEXTOID}
};

/*
 * Where Citus has the named subscribers (outbox/fan_out.c): the list
 * locked on every node (Citus sends LOCK TABLE to each) against the
 * writers' share of it, until the end of the transaction
 */
static OknoPlan cluster_lock_plan = {
	.sql = "LOCK TABLE %1$s.okno_subscriber IN EXCLUSIVE MODE",
	.nargs = 0
};

/*
 * the rows a subscription of this name may have left (a writer's rows
 * still being committed on their node when it was removed)
 */
static OknoPlan cluster_leftovers_plan = {
	.sql = "DELETE FROM %1$s.okno_delivery WHERE subscriber OPERATOR(pg_catalog.=) $1",
	.nargs = 1,
	.argtypes = {TEXTOID}
};

PG_FUNCTION_INFO_V1(okno_subscribe);
PG_FUNCTION_INFO_V1(okno_unsubscribe);

/*
 * Whether the subscribers are Citus's (outbox/fan_out.c): true where Citus
 * distributes outbox by bucket and has okno_delivery with it; false on one
 * server.  Elsewhere on a cluster (outbox in one shard, or okno's own
 * tables not laid out) fname is refused.
 */
static bool
cluster_subscribers(const char *fname)
{
	const OknoBinding *b;

	if (okno_application_tables_absent())
		return false;
	b = okno_binding();
	if (!b->citus[OKNO_REL_OUTBOX])
		return false;
	if (b->outbox_buckets && !okno_named_on_citus())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s needs okno's own tables laid out on the Citus cluster", fname),
				 errdetail("Named subscribers' delivery state is written with each event into okno_delivery, distributed with outbox; okno_delivery is this node's own table."),
				 errhint("Call SELECT * FROM okno_distribute_own_tables() on the coordinator as a superuser, then %s again.", fname)));
	if (!b->outbox_buckets)
		okno_refuse_on_citus(fname);
	return true;
}

/* the list locked on every node, where Citus has the subscribers */
static void
lock_cluster_list(void)
{
	int			rc = SPI_execute_plan(okno_plan(&cluster_lock_plan), NULL, NULL, false, 0);

	okno_check_spi(rc, SPI_OK_UTILITY, "subscribers' lock");
}

/* the subscriber argument of okno_subscribe and okno_unsubscribe */
static char *
name_arg(FunctionCallInfo fcinfo, const char *fname)
{
	okno_require_arg(fcinfo, 0, "subscriber", ERRCODE_NULL_VALUE_NOT_ALLOWED,
					 "Pass the name of the subscriber to %s.", fname);
	return okno_subscriber_arg(PG_GETARG_TEXT_PP(0), fname);
}

/*
 * okno_subscribe(subscriber text) RETURNS boolean
 *
 * False when the subscriber exists already (the default one always does).
 */
Datum
okno_subscribe(PG_FUNCTION_ARGS)
{
	char	   *name = name_arg(fcinfo, "okno_subscribe()");
	Datum		values[3];
	int			rc;
	bool		added;
	bool		cluster;
	OknoGuard	guard;

	if (strcmp(name, OKNO_DEFAULT_SUBSCRIBER) == 0)
		PG_RETURN_BOOL(false);
	PreventCommandIfReadOnly("okno_subscribe()");
	cluster = cluster_subscribers("okno_subscribe()");

	/*
	 * No drain of the default subscriber may forget an event while this
	 * transaction is open (see the top), and the snapshot stored is taken
	 * after that, whatever the isolation level.  On a cluster the snapshot
	 * and the system are placeholders (the events are not copied there:
	 * outbox/fan_out.c), and no writer may read the list meanwhile.
	 */
	if (!cluster)
		LockRelationOid(subscriber_table(), ExclusiveLock);

	values[0] = CStringGetTextDatum(name);
	values[1] = TimestampTzGetDatum(cluster ? GetCurrentTransactionStartTimestamp() :
									oldest_open_transaction());
	values[2] = Int64GetDatum(cluster ? 0 : (int64) GetSystemIdentifier());
	okno_guard_begin(&guard);
	okno_spi_connect();
	if (cluster)
		lock_cluster_list();
	rc = SPI_execute_snapshot(okno_plan(&subscribe_plan), values, NULL,
							  GetLatestSnapshot(), InvalidSnapshot, false, false, 0);
	okno_check_spi(rc, SPI_OK_INSERT, "subscriber insert");
	added = (SPI_processed == 1);
	if (added && cluster)
	{
		rc = SPI_execute_snapshot(okno_plan(&cluster_leftovers_plan), values, NULL,
								  GetLatestSnapshot(), InvalidSnapshot, false, false, 0);
		okno_check_spi(rc, SPI_OK_DELETE, "subscriber leftovers delete");
	}
	okno_spi_finish();
	okno_guard_end(&guard);
	PG_RETURN_BOOL(added);
}

/*
 * okno_unsubscribe(subscriber text) RETURNS boolean
 *
 * False when there is no such subscriber.  The default subscriber cannot
 * be removed.
 */
Datum
okno_unsubscribe(PG_FUNCTION_ARGS)
{
	char	   *name = name_arg(fcinfo, "okno_unsubscribe()");
	Datum		value;
	int			rc;
	bool		removed;
	bool		cluster;
	OknoGuard	guard;

	if (strcmp(name, OKNO_DEFAULT_SUBSCRIBER) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the default subscriber cannot be removed"),
				 errdetail("Its delivery state is the outbox's own (delivered_at, attempts, parked_at)."),
				 errhint("Remove a subscriber added with okno_subscribe().")));
	PreventCommandIfReadOnly("okno_unsubscribe()");
	cluster = cluster_subscribers("okno_unsubscribe()");

	value = CStringGetTextDatum(name);
	okno_guard_begin(&guard);
	okno_spi_connect();
	/* on a cluster: no writer reads the list until this commits */
	if (cluster)
		lock_cluster_list();
	rc = SPI_execute_plan(okno_plan(&unsubscribe_plan), &value, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_DELETE, "subscriber delete");
	removed = (SPI_processed > 0);
	if (removed)
	{
		rc = SPI_execute_snapshot(okno_plan(&unsubscribe_state_plan), &value, NULL,
								  GetLatestSnapshot(), InvalidSnapshot, false, false, 0);
		okno_check_spi(rc, SPI_OK_DELETE, "subscriber state delete");
	}
	okno_spi_finish();
	okno_guard_end(&guard);
	PG_RETURN_BOOL(removed);
}
