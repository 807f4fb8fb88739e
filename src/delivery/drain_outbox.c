/*-------------------------------------------------------------------------
 *
 * drain_outbox.c
 *	  The default subscriber's drain: hand pending outbox events to the
 *	  caller (for okno_drain_once() and okno_drain(n), drain.c).
 *
 * In the caller's transaction, the first due outbox rows by id are locked
 * with FOR UPDATE SKIP LOCKED, marked delivered_at = clock_timestamp() and
 * returned in id order.  Due means: not delivered, not parked, and
 * available_at (set by okno_record_failure's backoff) unset or past.  The
 * caller's transaction is the delivery: if it rolls back, the events are
 * pending again and a later drain hands them out again (at least once,
 * never exactly once).  While the first taker's transaction is open, other
 * drainers skip its rows and take the next ones.
 *
 * The pick runs on the partial index outbox_pending (pending, not parked
 * events only), and the update finds the picked rows by primary key
 * (= ANY of their ids), so neither depends on how many delivered rows the
 * table holds.
 *
 * Delivered events leave dead entries at the front of outbox_pending until
 * VACUUM removes them (ids grow, so nothing else ever cleans that end of the
 * index), and a scan from the start walks them all: with a million of them
 * a drain takes milliseconds instead of microseconds.  So each backend
 * keeps a cursor, the last id it handed out, and starts its next scan after
 * it (or from the ids of 100 ms ago, if those are lower: the events of
 * transactions that committed after the cursor passed them).  Events that
 * become due again behind the cursor (a drain that rolled back in another
 * session, a release, a requeue, a retry coming due) are found by a scan
 * from the start, which happens when the scan from the cursor finds
 * nothing, at least every five seconds, after this backend's own
 * transaction (or subtransaction) aborts, and after this backend released,
 * requeued or recorded a failure of an event.  The order of a batch is
 * always by id; across calls it is by id from the cursor.
 *
 * A new session has no cursor, and its first scan from the start would walk
 * every dead entry again (a relay reconnecting, or an application that opens
 * a connection per request and drains one event).  So every scan from the
 * start that finds an event writes where it found the first one into the
 * sequence okno_drain_hint, and a session's first drain starts there (and
 * moves it on to the first event it finds).  The hint is never a bound:
 * when the scan from it finds nothing, a scan from the start follows, as
 * above, and the five-second rule counts from the session's first drain.
 * It is read and written as the sequence's owner (as PostgreSQL's
 * foreign-key checks run as the owner of the table they read), so a drainer
 * needs no privilege on it; setval() is not transactional and takes no row
 * lock, so drainers never wait on each other for it.  An okno installed
 * before 0.4.0 has no such sequence: there every session starts from the
 * start.
 *
 * The update also clears created_xid (the writing transaction, which
 * subscribers copy events by) of the events that every subscriber has
 * copied, so that they leave the partial index outbox_created_xid:
 * otherwise every delivery, never a HOT update, would write an entry there.
 * forget_horizon says when it can (not in an okno installed before 0.5.0,
 * whose outbox has no created_xid).
 *
 * An okno installed at 0.1.0 drains with that version's query (its outbox
 * has no retry columns): okno_drain_outbox_0_1.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/tuplestore.h"

#include "access/xact.h"
#include "catalog/pg_class.h"
#include "utils/acl.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"

#include "base/base.h"
#include "outbox/outbox.h"
#include "delivery/delivery.h"

/* a scan from the start of the pending index at least this often (5 s) */
#define OKNO_DRAIN_RESCAN_US	((int64) 5000000)

/*
 * A scan from the cursor starts this far back in time (in ids: they begin
 * with their Unix time in milliseconds), for the events of transactions
 * that were still running when the cursor passed their ids (100 ms)
 */
#define OKNO_DRAIN_LOOKBACK_MS	100

static pg_uuid_t drain_cursor;		/* the last id this backend handed out */
static bool drain_cursor_valid = false;
static TimestampTz drain_last_full_scan = 0;
static bool drain_fresh = true;		/* no drain in this backend yet */

#define OKNO_DRAIN_HINT_SEQUENCE "okno_drain_hint"

/* okno 0.1.0: the outbox has no attempts, available_at or parked_at */
static OknoPlan drain_one_0_1_plan = {
	.sql =
	"UPDATE %1$s.outbox AS o SET delivered_at = pg_catalog.clock_timestamp()"
	" WHERE o.id OPERATOR(pg_catalog.=)"
	" (SELECT p.id FROM %1$s.outbox AS p WHERE p.delivered_at IS NULL"
	"  ORDER BY p.id LIMIT 1 FOR UPDATE SKIP LOCKED)"
	" RETURNING o.id, o.kind::pg_catalog.text, o.payload"
};

/* set names what the update sets besides delivered_at (OKNO_SQL_DRAIN_AT) */
#define OKNO_SQL_DRAIN(F, set) \
	OKNO_SQL_DRAIN_AT(F, set, "pg_catalog.clock_timestamp()", OKNO_SQL_ANY_BUCKET)

#define OKNO_SQL_DRAIN_PLAIN(F) OKNO_SQL_DRAIN(F, "")
static OknoPlan drain_plan = {
	OKNO_PLAN_FORMS(OKNO_SQL_DRAIN_PLAIN),
	.nargs = 2,
	.argtypes = {INT4OID, UUIDOID},
	.cursor_options = CURSOR_OPT_GENERIC_PLAN
};

/*
 * The same, forgetting the writing transaction of an event that every
 * subscriber has copied ($3, see forget_horizon), so that the delivered
 * row leaves the partial index outbox_created_xid.
 */
#define OKNO_SQL_FORGET \
	", created_xid = CASE WHEN o.created_xid OPERATOR(pg_catalog.<) $3" \
	" THEN NULL ELSE o.created_xid END"
#define OKNO_SQL_DRAIN_FORGET(F) OKNO_SQL_DRAIN(F, OKNO_SQL_FORGET)
static OknoPlan drain_forget_plan = {
	OKNO_PLAN_FORMS(OKNO_SQL_DRAIN_FORGET),
	.nargs = 3,
	.argtypes = {INT4OID, UUIDOID, XID8OID},
	.cursor_options = CURSOR_OPT_GENERIC_PLAN
};

/*
 * The first undelivered event between two ids that is not a booking's
 * first: one that a batch may have passed while an event it delivered held
 * it back.  It runs on the partial index outbox_later, which holds only
 * such events while they are undelivered (a few: the later events of
 * bookings), so it costs one short index scan per batch.
 */
static OknoPlan later_plan = {
	.sql =
	"SELECT p.id FROM %1$s.outbox AS p"
	" WHERE p.delivered_at IS NULL"
	"   AND p.kind OPERATOR(pg_catalog.<>) 'booking_created'"
	"   AND p.id OPERATOR(pg_catalog.>) $1 AND p.id OPERATOR(pg_catalog.<) $2"
	" ORDER BY p.id LIMIT 1",
	.nargs = 2,
	.argtypes = {UUIDOID, UUIDOID},
	.cursor_options = CURSOR_OPT_GENERIC_PLAN
};

/*
 * This backend made an event due again (okno_release, okno_requeue,
 * okno_record_failure): it may lie behind the cursor, so start the next
 * scan from the beginning.
 */
void
okno_drain_forget_cursor(void)
{
	drain_cursor_valid = false;
}

/*
 * After an abort, events this backend drained are due again behind its
 * cursor: start the next scan from the beginning.
 */
static void
drain_xact_callback(XactEvent event, void *arg pg_attribute_unused())
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		drain_cursor_valid = false;
}

static void
drain_subxact_callback(SubXactEvent event,
					   SubTransactionId mySubid pg_attribute_unused(),
					   SubTransactionId parentSubid pg_attribute_unused(),
					   void *arg pg_attribute_unused())
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		drain_cursor_valid = false;
}

/*
 * Register what this file needs to know of transactions.
 */
void
okno_drain_outbox_init(void)
{
	RegisterXactCallback(drain_xact_callback, NULL);
	RegisterSubXactCallback(drain_subxact_callback, NULL);
}

/* the id just below id (the nil UUID stays nil) */
static void
uuid_decrement(pg_uuid_t *id)
{
	int			i;

	for (i = UUID_LEN - 1; i >= 0; i--)
	{
		if (id->data[i] != 0)
		{
			id->data[i]--;
			return;
		}
		id->data[i] = 0xff;
	}
	memset(id, 0, sizeof(*id));
}

/*
 * Run plan with max_events, the lower bound and, for drain_forget_plan, the
 * horizon, and put the first ncols columns of each row into the result
 * set; return the number of rows, remember the last id and, if first is
 * not NULL, copy the first id there.
 */
static uint64
run_drain(ReturnSetInfo *rsinfo, OknoPlan *plan, int32 max_events,
		  pg_uuid_t *lower, FullTransactionId horizon, int ncols, pg_uuid_t *first)
{
	Datum		args[3];
	int			rc;
	uint64		i;
	uint64		n;
	bool		isnull;

	args[0] = Int32GetDatum(max_events);
	args[1] = UUIDPGetDatum(lower);
	args[2] = FullTransactionIdGetDatum(horizon);
	rc = SPI_execute_plan(okno_plan(plan), args, NULL, false, 0);
	if (rc != SPI_OK_SELECT && rc != SPI_OK_UPDATE_RETURNING)
		okno_check_spi(rc, SPI_OK_SELECT, "outbox drain");

	n = SPI_processed;

	for (i = 0; i < n; i++)
	{
		Datum		values[4];
		bool		nulls[4];
		int			col;

		CHECK_FOR_INTERRUPTS();
		for (col = 0; col < ncols; col++)
			values[col] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
										col + 1, &nulls[col]);
		/* tuplestore_putvalues copies into the tuplestore's own context */
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		if (i == 0 && first != NULL && !nulls[0])
			memcpy(first, DatumGetUUIDP(values[0]), sizeof(pg_uuid_t));
		if (i == n - 1 && !nulls[0])
		{
			memcpy(&drain_cursor, DatumGetUUIDP(values[0]), sizeof(pg_uuid_t));
			drain_cursor_valid = true;
		}
	}

	/*
	 * An event of the batch's range that the batch passed because an event
	 * it delivered held it back is due when this transaction commits: the
	 * cursor must not pass it.  (An event held back by something else is
	 * due again behind the cursor like any other, found by the next scan
	 * from the start.)
	 */
	if (plan != &drain_one_0_1_plan && n > 1)
	{
		Datum		bounds[2];

		bounds[0] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		bounds[1] = SPI_getbinval(SPI_tuptable->vals[n - 1], SPI_tuptable->tupdesc, 1, &isnull);
		rc = SPI_execute_plan(okno_plan(&later_plan), bounds, NULL, false, 1);
		okno_check_spi(rc, SPI_OK_SELECT, "outbox later events");
		if (SPI_processed == 1)
		{
			pg_uuid_t	before;

			memcpy(&before, DatumGetUUIDP(SPI_getbinval(SPI_tuptable->vals[0],
														SPI_tuptable->tupdesc, 1, &isnull)),
				   sizeof(pg_uuid_t));
			uuid_decrement(&before);
			if (memcmp(&before, &drain_cursor, sizeof(pg_uuid_t)) < 0)
				drain_cursor = before;
		}
	}
	return n;
}

/*
 * The hint sequence's OID, or InvalidOid when this database's okno predates
 * it.  Looked up by name each time: that happens once per session and once
 * per scan from the start, a syscache probe each.
 */
static Oid
hint_sequence(void)
{
	return okno_relid_by_name(OKNO_DRAIN_HINT_SEQUENCE);
}

/* switch to the hint sequence's owner; returns false if it has vanished */
static bool
hint_become_owner(Oid seq, Oid *save_userid, int *save_sec)
{
	HeapTuple	tup;
	Oid			owner;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(seq));
	if (!HeapTupleIsValid(tup))
		return false;
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);

	GetUserIdAndSecContext(save_userid, save_sec);
	SetUserIdAndSecContext(owner, *save_sec | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	return true;
}

/* the high 64 bits of an id as a bigint that sorts as the uuid does */
static int64
hint_of(const pg_uuid_t *id)
{
	uint64		v = 0;
	int			i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | id->data[i];
	return (int64) (v ^ (UINT64CONST(1) << 63));
}

/*
 * Read the hint into *hint; false when there is none (no sequence, or no
 * scan has written it yet).
 */
static bool
hint_read(Oid seq, int64 *hint)
{
	LOCAL_FCINFO(fcinfo, 1);
	Oid			save_userid;
	int			save_sec;
	Datum		d;

	if (!OidIsValid(seq) || !hint_become_owner(seq, &save_userid, &save_sec))
		return false;
	InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = ObjectIdGetDatum(seq);
	fcinfo->args[0].isnull = false;
	d = pg_sequence_last_value(fcinfo);
	SetUserIdAndSecContext(save_userid, save_sec);
	if (fcinfo->isnull)
		return false;
	*hint = DatumGetInt64(d);
	return true;
}

/* a scan from the start found first: record it, unless already recorded */
static void
hint_write(const pg_uuid_t *first)
{
	Oid			seq = hint_sequence();
	int64		hint = hint_of(first);
	int64		old;
	Oid			save_userid;
	int			save_sec;

	if (hint_read(seq, &old) && old == hint)
		return;
	if (!OidIsValid(seq) || !hint_become_owner(seq, &save_userid, &save_sec))
		return;
	(void) DirectFunctionCall2(setval_oid, ObjectIdGetDatum(seq), Int64GetDatum(hint));
	SetUserIdAndSecContext(save_userid, save_sec);
}

/*
 * The lower bound of a scan from the hint: every id whose high 64 bits are
 * at least the hint's is above it.  False when there is no hint, or when it
 * is the very start anyway.
 */
static bool
hint_lower_bound(pg_uuid_t *lower)
{
	int64		hint;
	uint64		v;
	int			i;

	if (!hint_read(hint_sequence(), &hint))
		return false;
	v = (uint64) hint ^ (UINT64CONST(1) << 63);
	if (v == 0)
		return false;
	v--;
	for (i = 0; i < 8; i++)
		lower->data[i] = (uint8) (v >> (56 - 8 * i));
	memset(lower->data + 8, 0xff, 8);
	return true;
}

/*
 * The lower bound of a scan from the cursor: the cursor, or the first id of
 * OKNO_DRAIN_LOOKBACK_MS ago if that is lower.  Under steady load a scan
 * from the cursor always finds events, so one that a transaction wrote
 * before the cursor passed its id and committed after would otherwise wait
 * for the next scan from the start (up to five seconds); the look back
 * finds it at once for the price of the entries delivered in the last
 * 100 ms.
 */
static void
cursor_bound(pg_uuid_t *lower)
{
	int64		ms = okno_now_unix_us() / 1000 - OKNO_DRAIN_LOOKBACK_MS;
	pg_uuid_t	back;
	int			i;

	memset(&back, 0, sizeof(back));
	for (i = 0; i < 6; i++)
		back.data[i] = (uint8) ((uint64) ms >> (40 - 8 * i));
	if (memcmp(&back, &drain_cursor, sizeof(back)) < 0)
		*lower = back;
	else
		*lower = drain_cursor;
}

/*
 * Where this backend's next drain would start scanning: from its cursor
 * (true, *lower set) or from the start (false).  okno_wait checks from
 * there too, so that it does not walk what the drains skip.
 */
bool
okno_drain_scan_start(pg_uuid_t *lower)
{
	if (drain_cursor_valid &&
		GetCurrentTimestamp() - drain_last_full_scan < OKNO_DRAIN_RESCAN_US)
	{
		cursor_bound(lower);
		return true;
	}
	memset(lower, 0, sizeof(*lower));
	return false;
}

/* whether user holds mode on the column, on it or on the whole table */
static bool
column_privilege(Oid relid, AttrNumber att, Oid user, AclMode mode)
{
	return pg_class_aclcheck(relid, user, mode) == ACLCHECK_OK ||
		pg_attribute_aclcheck(relid, att, user, mode) == ACLCHECK_OK;
}

/*
 * Whether this drain forgets the writing transaction of the events it
 * delivers that every subscriber has copied, and below which xid
 * (*horizon, okno_subscriber_horizon).  It does when
 *	 - outbox has created_xid (an okno installed before 0.5.0 has not);
 *	 - the caller may read and update it: okno does not act as the caller
 *	   beyond what the caller may do, and a drainer without the privilege
 *	   (a role granted outbox's columns one by one, before it had
 *	   created_xid) drains without forgetting;
 *	 - every subscriber's snapshot is of this cluster.
 * The subscribers are read in the latest snapshot, not the drain's (which
 * may be a REPEATABLE READ transaction's, older than a subscription that
 * has not copied an event the drain sees).  Otherwise the events keep
 * created_xid: nothing is lost, the index outbox_created_xid only keeps
 * them longer.
 */
static bool
forget_horizon(FullTransactionId *horizon)
{
	Oid			outbox = okno_relid(OKNO_REL_OUTBOX);
	AttrNumber	att = okno_attnum(outbox, "created_xid");
	Oid			user = GetUserId();

	if (att == InvalidAttrNumber || get_atttype(outbox, att) != XID8OID)
		return false;
	if (!column_privilege(outbox, att, user, ACL_SELECT) ||
		!column_privilege(outbox, att, user, ACL_UPDATE))
		return false;
	return okno_subscriber_horizon(horizon);
}

/*
 * Drain up to max_events due events into rsinfo's result set (made ready
 * by the caller) and return how many: from this backend's cursor when it
 * has one and the last scan from the start is recent; in a session's first
 * drain, from the hint; otherwise (or when that finds nothing) from the
 * start.
 */
uint64
okno_drain_outbox(ReturnSetInfo *rsinfo, int32 max_events, int ncols)
{
	pg_uuid_t	start;
	pg_uuid_t	first;
	TimestampTz now = GetCurrentTimestamp();
	uint64		n = 0;
	FullTransactionId horizon = InvalidFullTransactionId;
	OknoPlan   *plan = &drain_plan;
	OknoGuard	guard;

	/* (the privileges forget_horizon checks are those the drain runs with) */
	okno_guard_begin(&guard);
	if (forget_horizon(&horizon))
		plan = &drain_forget_plan;
	okno_spi_connect();
	if (drain_cursor_valid && now - drain_last_full_scan < OKNO_DRAIN_RESCAN_US)
	{
		cursor_bound(&start);
		n = run_drain(rsinfo, plan, max_events, &start, horizon, ncols, NULL);
	}
	else if (drain_fresh && hint_lower_bound(&start))
	{
		n = run_drain(rsinfo, plan, max_events, &start, horizon, ncols, &first);
		/* it moves the hint on as a scan from the start would; five seconds */
		if (n > 0)
		{
			hint_write(&first);
			drain_last_full_scan = now;
		}
	}
	drain_fresh = false;

	if (n == 0)
	{
		memset(&start, 0, sizeof(start));	/* the nil UUID: below every id */
		n = run_drain(rsinfo, plan, max_events, &start, horizon, ncols, &first);
		if (n > 0)
			hint_write(&first);
		drain_last_full_scan = now;
	}
	okno_spi_finish();
	okno_guard_end(&guard);
	return n;
}

/*
 * The drain of one event for an okno installed at 0.1.0 (its outbox has no
 * attempts, available_at or parked_at) into rsinfo's result set; returns
 * how many.
 */
uint64
okno_drain_outbox_0_1(ReturnSetInfo *rsinfo)
{
	pg_uuid_t	unused;
	uint64		n;
	OknoGuard	guard;

	memset(&unused, 0, sizeof(unused));
	okno_guard_begin(&guard);
	okno_spi_connect();
	n = run_drain(rsinfo, &drain_one_0_1_plan, 1, &unused,
				  InvalidFullTransactionId, 3, NULL);
	okno_spi_finish();
	okno_guard_end(&guard);
	return n;
}
