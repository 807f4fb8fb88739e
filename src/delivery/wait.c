/*-------------------------------------------------------------------------
 *
 * wait.c
 *	  CALL okno_wait(timeout_ms): a relay waits inside the server until an
 *	  event may be due, and the commit that wrote one wakes it.
 *
 * No shared memory of okno's own (a trusted extension cannot ask for it)
 * and no NOTIFY (PostgreSQL serialises the commits of notifying
 * transactions).  The waiters are found through the lock manager instead:
 *
 * - A waiter holds a session advisory lock on okno's wait tag, in share
 *	 mode, for as long as it waits.  Waiters never conflict with each other,
 *	 and nobody ever asks for the tag in a mode that conflicts.
 *
 * - A transaction that wrote an event, or made one due again, looks the
 *	 tag's holders up once it has committed and sets their latches
 *	 (outbox/wake.c, with the write).
 *
 * - A transaction prepared for two-phase commit that wrote an event keeps
 *	 a lock on a second tag until COMMIT or ROLLBACK PREPARED (wake.c); while
 *	 any such lock exists a waiter looks every OKNO_WAIT_PREPARED_POLL_MS
 *	 whether one has gone; when one has, it checks the outbox, which tells a
 *	 commit from a rollback.
 *
 * The wait takes no snapshot: it checks the outbox once on entry (is an
 * event due now, and when does the next delayed one come due), commits that
 * check's transaction as a procedure may, and sleeps on its latch with no
 * xmin, so a waiting relay never holds back VACUUM.  That is why okno_wait
 * is a procedure, called on its own (CALL), and refused inside a
 * transaction block, where it would have to keep the transaction's
 * snapshot.
 *
 * The tags are advisory locks of okno's database with a fourth key field
 * that the SQL advisory lock functions never use (they use 1 and 2), so no
 * SQL caller can take or block them (base.h): in pg_locks, locktype
 * 'advisory', classid 1869311599 ("okno"), objid 0 (waiters) or 1
 * (prepared transactions with events), objsubid 4.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/latch.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "base/base.h"
#include "outbox/outbox.h"
#include "delivery/delivery.h"

/* while a prepared transaction holds events, look this often (ms) */
#define OKNO_WAIT_PREPARED_POLL_MS	10

/* while open drains hold every due event, look this often (ms) */
#define OKNO_WAIT_HELD_POLL_MS		100

PG_FUNCTION_INFO_V1(okno_wait);

/* this backend holds the waiters' tag (a session lock) */
static bool holding_wait_tag = false;

/*
 * The due events, in the order drains take them, with the transaction (if
 * any) that last updated or locked each: a drain that has not committed
 * yet holds its events, and those are not due for anyone else.  Held-back
 * events (an earlier event of their booking is undelivered) are not due
 * either; when an open drain holds the earlier one, that one shows here as
 * held, and the wait polls until the drain ends.
 */
#define OKNO_SQL_WAIT_DUE(F) \
	"SELECT p.xmax FROM %1$s.outbox AS p" \
	" WHERE" OKNO_SQL_OUTBOX_DUE(F, "p", "$1") \
	" ORDER BY p.id LIMIT 1000"
static OknoPlan due_plan = {
	OKNO_PLAN_FORMS(OKNO_SQL_WAIT_DUE),
	.nargs = 1,
	.argtypes = {UUIDOID},
	.cursor_options = CURSOR_OPT_GENERIC_PLAN
};

/*
 * The same for a subscriber other than the default one ($1): its due rows
 * of okno_delivery, with the transaction that last updated or locked each
 */
#define OKNO_SQL_WAIT_SUBSCRIBER_DUE(F) \
	"SELECT p.xmax FROM %1$s.okno_delivery AS p" \
	" WHERE" OKNO_SQL_DELIVERY_DUE(F, "p", "$1") \
	" ORDER BY p.subscriber, p.event_id LIMIT 1000"
static OknoPlan subscriber_due_plan = {
	OKNO_PLAN_FORMS(OKNO_SQL_WAIT_SUBSCRIBER_DUE),
	.nargs = 1,
	.argtypes = {TEXTOID}
};

/*
 * Whether the subscriber ($1) has events to copy (committed since its
 * stored snapshot, or a snapshot of another cluster than $2's: its next
 * drain copies again), and the transaction that last updated or locked its
 * row: a drain that is copying holds them.  No row: it was removed.
 */
static OknoPlan subscriber_new_plan = {
	.sql =
	"SELECT u.xmax, u.copied_system OPERATOR(pg_catalog.<>) $2"
	"       OR (SELECT e.created_xid FROM %1$s.outbox AS e"
	"            WHERE" OKNO_SQL_NOT_COPIED("e", "u.copied_snapshot", "pg_catalog.pg_current_snapshot()")
	"            ORDER BY e.created_xid LIMIT 1) IS NOT NULL"
	"  FROM %1$s.okno_subscriber AS u WHERE u.name OPERATOR(pg_catalog.=) $1",
	.nargs = 2,
	.argtypes = {TEXTOID, INT8OID}
};

typedef enum OutboxState
{
	OUTBOX_IDLE,				/* nothing due */
	OUTBOX_HELD,				/* due events, all held by open drains */
	OUTBOX_DUE					/* an event is due and free to drain */
} OutboxState;

/*
 * How many transactions (prepared ones, or ones being prepared) hold events
 * that their COMMIT PREPARED will make due.
 */
static int
count_prepared(void)
{
	LOCKTAG		tag;
	VirtualTransactionId *holders;
	int			n;

	okno_wait_tag(&tag, OKNO_WAIT_TAG_PREPARED);
	holders = GetLockConflicts(&tag, ExclusiveLock, &n);
	pfree(holders);
	return n;
}

static void
release_wait_tag(void)
{
	LOCKTAG		tag;

	if (!holding_wait_tag)
		return;
	holding_wait_tag = false;
	okno_wait_tag(&tag, OKNO_WAIT_TAG_WAITERS);
	LockRelease(&tag, ShareLock, true);
}

/*
 * A wait that ended in an error (cancel, timeout) lets go of the waiters'
 * tag.
 */
static void
wait_xact_callback(XactEvent event, void *arg pg_attribute_unused())
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		release_wait_tag();
}

/*
 * Register what this file needs to know of transactions.
 */
void
okno_wait_init(void)
{
	RegisterXactCallback(wait_xact_callback, NULL);
}

/*
 * Is transaction xid still running?  Its lock says so, as for a row lock
 * wait, but without waiting: the lock table only, never the commit log, so
 * that an xmax that is a MultiXactId (a row share-locked by several
 * transactions) cannot make it fail; such a row just counts as free.
 */
static bool
xact_running(TransactionId xid)
{
	LOCKTAG		tag;

	SET_LOCKTAG_TRANSACTION(tag, xid);
	if (LockAcquire(&tag, ShareLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
		return true;
	LockRelease(&tag, ShareLock, false);
	return false;
}

/*
 * Look at the outbox in a snapshot of its own, then end the transaction so
 * that no snapshot stays.  OUTBOX_DUE if an event is due that no open drain
 * holds (a drain that has not committed yet holds its events: without this,
 * a relay would be woken at once, again and again, by the events another
 * relay is delivering); otherwise *next_due is when the first delayed
 * event comes due (0 if none).
 */
static OutboxState
scan_due(OknoPlan *plan, Datum arg)
{
	Portal		portal;
	OutboxState state = OUTBOX_IDLE;
	bool		isnull;
	Datum		value;

	portal = SPI_cursor_open(NULL, okno_plan(plan), &arg, NULL, false);
	while (state != OUTBOX_DUE)
	{
		uint64		i;

		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, 50);
		if (SPI_processed == 0)
			break;
		for (i = 0; i < SPI_processed; i++)
		{
			TransactionId xmax;

			value = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
			xmax = isnull ? InvalidTransactionId : DatumGetTransactionId(value);
			if (!TransactionIdIsNormal(xmax) || !xact_running(xmax))
			{
				state = OUTBOX_DUE;
				break;
			}
			state = OUTBOX_HELD;
		}
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	return state;
}

/*
 * Whether the subscriber name (not the default one) has new
 * events to copy: OUTBOX_DUE, or OUTBOX_HELD while a drain that is copying
 * holds its row.  A subscriber removed meanwhile is OUTBOX_DUE: the
 * caller's next drain reports it.
 */
static OutboxState
scan_new(text *name)
{
	Datum		args[2];
	bool		isnull;
	Datum		value;
	TransactionId xmax;
	int			rc;

	args[0] = PointerGetDatum(name);
	args[1] = Int64GetDatum((int64) GetSystemIdentifier());
	rc = SPI_execute_plan(okno_plan(&subscriber_new_plan), args, NULL, false, 1);
	okno_check_spi(rc, SPI_OK_SELECT, "subscriber wait check");
	if (SPI_processed == 0)
		return OUTBOX_DUE;
	value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
	if (isnull || !DatumGetBool(value))
		return OUTBOX_IDLE;
	value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	xmax = isnull ? InvalidTransactionId : DatumGetTransactionId(value);
	if (TransactionIdIsNormal(xmax) && xact_running(xmax))
		return OUTBOX_HELD;
	return OUTBOX_DUE;
}

/*
 * Whom a wait is for: the subscriber's routines (delivery/routine.c) and
 * their statements' subscriber argument, chosen once per call.
 */
typedef struct WaitFor
{
	const OknoDeliveryRoutine *routine;
	Datum		arg;			/* the subscriber's name as text */
	char		argnull;		/* 'n': the default subscriber */
} WaitFor;

/*
 * Look for work of the subscriber name (NULL: the default one) in a
 * snapshot of its own, as the comment of scan_due says.
 */
static OutboxState
check_outbox(const WaitFor *who, TimestampTz *next_due)
{
	char		argnull[2] = {who->argnull, '\0'};
	pg_uuid_t	lower;
	OutboxState state;
	bool		isnull;
	Datum		value;
	int			rc;
	OknoGuard	guard;

	*next_due = 0;
	/* within the check's transaction: its end restores nothing of ours */
	okno_guard_begin(&guard);

	/*
	 * Where Citus distributes outbox by bucket, shard by shard, or keeps it
	 * in one shard (drain_buckets.c), for the default subscriber or a named
	 * one (its rows are written with each event there: nothing to copy).
	 * A commit wakes this wait only when it ran through this node; events
	 * written through another node are found at the next check (the
	 * timeout).
	 */
	if (okno_binding()->outbox_buckets || okno_binding()->outbox_one_shard)
		state = okno_buckets_due(who->argnull != 'n' ? TextDatumGetCString(who->arg) : NULL) ?
			OUTBOX_DUE : OUTBOX_IDLE;

	else if (who->argnull != 'n')
	{
		/* a subscriber's own rows, then what it has not copied */
		state = scan_due(&subscriber_due_plan, who->arg);
		if (state != OUTBOX_DUE)
		{
			OutboxState copy = scan_new(DatumGetTextPP(who->arg));

			if (copy != OUTBOX_IDLE)
				state = copy;
		}
	}

	/*
	 * The default subscriber: from where this backend's next drain would
	 * scan (its cursor: under load, the entries behind it are mostly those
	 * of delivered events that VACUUM has not removed yet), and from the
	 * start if nothing is free there, as the drain does.
	 */
	else if (okno_drain_scan_start(&lower))
	{
		state = scan_due(&due_plan, UUIDPGetDatum(&lower));
		if (state != OUTBOX_DUE)
		{
			memset(&lower, 0, sizeof(lower));
			state = scan_due(&due_plan, UUIDPGetDatum(&lower));
		}
	}
	else
		state = scan_due(&due_plan, UUIDPGetDatum(&lower));

	if (state != OUTBOX_DUE)
	{
		value = who->arg;
		rc = SPI_execute_plan(okno_plan(who->routine->next_due), &value, argnull, false, 1);
		okno_check_spi(rc, SPI_OK_SELECT, "outbox wait check");
		if (SPI_processed != 1)
			elog(ERROR, "outbox wait check returned " UINT64_FORMAT " rows", SPI_processed);
		value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (!isnull)
			*next_due = DatumGetTimestampTz(value);
	}
	okno_guard_end(&guard);

	/*
	 * The check's snapshot goes with its transaction (SPI_commit starts the
	 * next one), so none is left while this backend sleeps.
	 */
	SPI_commit();

	return state;
}

static int
ms_until(TimestampTz now, TimestampTz then)
{
	int64		us = then - now;

	if (us <= 0)
		return 0;
	if (us >= (int64) INT_MAX * 1000)
		return INT_MAX;
	return (int) ((us + 999) / 1000);
}

/*
 * Wait until an event is due for the subscriber name (NULL for the default
 * one) or the timeout passes; true for the former.  The caller
 * holds the waiters' tag.
 */
static bool
wait_for_event(int32 timeout_ms, const WaitFor *who)
{
	TimestampTz end;
	TimestampTz next_due;
	OutboxState state;
	int			nprepared;

	end = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);

	/*
	 * A commit from here on sets the latch: reset it before a check, never
	 * between a check and the sleep, so a commit that a check did not see
	 * still ends the sleep.
	 */
	ResetLatch(MyLatch);
	state = check_outbox(who, &next_due);
	if (state == OUTBOX_DUE)
		return true;
	nprepared = count_prepared();

	for (;;)
	{
		TimestampTz now = GetCurrentTimestamp();
		bool		recheck = false;
		int			sleep_ms;
		int			rc;

		if (now >= end)
			return false;
		sleep_ms = ms_until(now, end);
		if (next_due != 0)
			sleep_ms = Min(sleep_ms, ms_until(now, next_due));
		if (nprepared > 0)
			sleep_ms = Min(sleep_ms, OKNO_WAIT_PREPARED_POLL_MS);
		if (state == OUTBOX_HELD)
			sleep_ms = Min(sleep_ms, OKNO_WAIT_HELD_POLL_MS);

		rc = WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					   sleep_ms, PG_WAIT_EXTENSION);
		if (rc & WL_LATCH_SET)
		{
			/*
			 * A commit that wrote an event, or one of the signals that set
			 * every latch (a timer, a cache catch-up, a cancel): only the
			 * outbox tells them apart.
			 */
			ResetLatch(MyLatch);
			recheck = true;
		}
		/* cancel, statement_timeout, lock_timeout, shutdown */
		CHECK_FOR_INTERRUPTS();

		/* a delayed event came due */
		if (next_due != 0 && GetCurrentTimestamp() >= next_due)
			recheck = true;
		/* an open drain's events: due again if it rolled back */
		if (state == OUTBOX_HELD)
			recheck = true;
		/* a prepared transaction ended: committed or rolled back */
		if (nprepared > 0)
		{
			int			n = count_prepared();

			if (n < nprepared)
				recheck = true;
			nprepared = n;
		}

		if (recheck)
		{
			state = check_outbox(who, &next_due);
			if (state == OUTBOX_DUE)
				return true;
		}
	}
}

/*
 * CALL okno_wait(timeout_ms integer, INOUT woken boolean DEFAULT NULL)
 * CALL okno_wait(timeout_ms integer, INOUT woken boolean, subscriber text)
 *
 * Returns when an event is due (woken: true) or after timeout_ms
 * milliseconds (false).  lock_timeout, when set and shorter, ends the wait
 * as it ends a wait for a lock (55P03).  With a subscriber, an event is due
 * for it when one of its rows of okno_delivery is, or when events were
 * committed that it has not copied: every commit that wakes the default
 * subscriber's waiters wakes its waiters too.
 */
Datum
okno_wait(PG_FUNCTION_ARGS)
{
	CallContext *call = (CallContext *) fcinfo->context;
	int32		timeout_ms;
	bool		woken;
	LOCKTAG		tag;
	TupleDesc	tupdesc;
	Datum		value;
	WaitFor		who;
	bool		isnull = false;

	if (call == NULL || !IsA(call, CallContext) || call->atomic)
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("okno_wait() cannot run inside a transaction block"),
				 errdetail("A wait inside a transaction would keep its snapshot, and with it every row version VACUUM could remove."),
				 errhint("Run CALL okno_wait(timeout_ms) on its own, outside BEGIN ... COMMIT and outside functions.")));
	/* it ends its transaction, which a subtransaction (EXCEPTION) may not */
	if (IsSubTransaction())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_TERMINATION),
				 errmsg("okno_wait() cannot run inside a subtransaction"),
				 errhint("Call it outside PL/pgSQL blocks with an EXCEPTION clause.")));
	okno_require_arg(fcinfo, 0, "timeout_ms", ERRCODE_NULL_VALUE_NOT_ALLOWED, NULL);
	timeout_ms = PG_GETARG_INT32(0);
	if (timeout_ms < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timeout_ms must not be negative"),
				 errhint("Pass the longest wait in milliseconds; 0 only checks for due events.")));

	if (SPI_connect_ext(SPI_OPT_NONATOMIC) != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect_ext failed");
	/* in the procedure's SPI context, which outlives the checks' commits */
	who.routine = okno_delivery_routine(PG_NARGS() > 2 ?
										okno_subscriber_of(fcinfo, 2, "okno_wait()") : NULL,
										&who.arg, &who.argnull);
	if (who.argnull != 'n' && okno_binding()->citus[OKNO_REL_OUTBOX] &&
		who.routine != &okno_named_bucket_routine)
		okno_refuse_on_citus("okno_wait() with a subscriber");
	okno_require_outbox_buckets(okno_binding(), "okno_wait()");

	okno_wait_tag(&tag, OKNO_WAIT_TAG_WAITERS);
	if (LockAcquire(&tag, ShareLock, true, true) == LOCKACQUIRE_NOT_AVAIL)
		elog(ERROR, "okno's wait tag is locked");
	holding_wait_tag = true;

	if (LockTimeout > 0)
		enable_timeout_after(LOCK_TIMEOUT, LockTimeout);
	woken = wait_for_event(timeout_ms, &who);
	if (LockTimeout > 0)
		disable_timeout(LOCK_TIMEOUT, false);
	release_wait_tag();

	okno_spi_finish();

	/* the procedure's INOUT parameter, as a one-column row */
	tupdesc = CreateTemplateTupleDesc(1);
	TupleDescInitEntry(tupdesc, (AttrNumber) 1, "woken", BOOLOID, -1, 0);
	tupdesc = BlessTupleDesc(tupdesc);
	value = BoolGetDatum(woken);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, &value, &isnull)));
}
