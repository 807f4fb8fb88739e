/*-------------------------------------------------------------------------
 *
 * drain_subscriber.c
 *	  Hand events to a subscriber other than the default one (for
 *	  okno_drain(max_events, subscriber), okno_drain_once(subscriber),
 *	  drain.c).
 *
 * A subscriber's position is a snapshot, okno_subscriber.copied_snapshot:
 * every event whose writing transaction that snapshot sees as finished is
 * copied (or came before the subscription).  An event that a drain hands
 * out as it copies it is delivered and leaves no row; every other copied
 * event has a row of okno_delivery (delivered_at, attempts, available_at,
 * parked_at, as outbox has for the default subscriber) from the copy on:
 * one held back, and later one that failed, was released or parked.  When
 * a drain delivers a row's event, it deletes a row that never failed (no
 * attempt, no error: there is nothing to keep that no row would not say)
 * and marks the others delivered.  A drain
 *
 *	 1. locks the subscriber's row (FOR NO KEY UPDATE SKIP LOCKED: a
 *		failure report's FOR KEY SHARE of it does not wait for the drain,
 *		okno_unsubscribe's delete does);
 *	 2. hands out the subscriber's due rows of okno_delivery (retries,
 *		releases, requeues, events held back before), as the default
 *		subscriber's drain does from outbox;
 *	 3. if it got the lock and there is room left in the batch: copies the
 *		events that the statement's snapshot sees committed and the stored
 *		snapshot did not (found by outbox.created_xid, between the stored
 *		snapshot's xmin and the new one's xmax, on the index
 *		outbox_created_xid), about as many as there is room for, by whole
 *		transactions in xid order; hands out at once those that nothing
 *		holds back, stores a pending row for each of the rest, and stores
 *		the new snapshot, cut where the copy stopped.
 *
 * Events are copied by the commit of their transaction, not by their id:
 * an event written by a transaction that is still open is copied by the
 * first drain after it commits, whatever its id, and the course's events
 * with ids that are not time-ordered are no different.  Only one drain at a
 * time copies for a subscriber (the row lock); a competing drain of the
 * same subscriber skips step 3 and takes only rows already copied.  So
 * creating an event costs nothing per subscriber, and delivering one that
 * nothing holds back writes nothing per event either: the copy's new
 * snapshot is the record.  okno_record_failure and okno_release with a
 * subscriber write the row of such an event when they are called for it
 * (failure.c).
 *
 * Order per booking is the default subscriber's rule over okno_delivery: an
 * event is held back while an earlier event of its booking is undelivered
 * for this subscriber, and a batch holds at most one event of a booking
 * (two new events of one booking: the later one is stored as pending).
 *
 * The transaction that drains may have written events itself: the new
 * snapshot keeps its own transaction as running, and its events are not
 * copied until it has committed.
 *
 * xids are those of the cluster: a dump restored into another cluster
 * brings snapshots whose xids mean nothing there.  okno_subscriber keeps the
 * system identifier of the cluster its snapshot was taken in; when it is not
 * this cluster's, the first drain copies, as pending, every event since the
 * subscription began (okno_subscriber.since, by created_at) that has no
 * okno_delivery row and that the stored snapshot had not copied: one whose
 * transaction (an xid of the same other cluster, as created_xid is in
 * the restored rows) the stored snapshot does not see finished, or one
 * that began after the last copy there (okno_subscriber.copied_at), which
 * every event written in this cluster did; then it takes a snapshot of
 * this cluster.  Events that the subscriber had copied keep their state;
 * nothing it had not copied is lost.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/tuplestore.h"
#include "utils/xid8.h"

#include "base/base.h"
#include "outbox/outbox.h"
#include "delivery/delivery.h"

/*
 * The snapshot to store after a copy in snapshot s.c of the events of the
 * transactions below b.x (b.x is s.c's xmax when the copy took them all):
 * s.c cut at b.x, with this transaction (own, the parameter holding its
 * xid: s.c sees its own transaction as finished) among the running ones.
 */
#define OKNO_SQL_NEW_SNAPSHOT(own) \
	"(SELECT (LEAST(pg_catalog.pg_snapshot_xmin(s.c), b.x, pg_catalog.min(v.v))::pg_catalog.text" \
	"         OPERATOR(pg_catalog.||) ':'" \
	"         OPERATOR(pg_catalog.||) LEAST(pg_catalog.pg_snapshot_xmax(s.c), b.x)::pg_catalog.text" \
	"         OPERATOR(pg_catalog.||) ':'" \
	"         OPERATOR(pg_catalog.||) COALESCE(pg_catalog.string_agg(v.v::pg_catalog.text, ','" \
	"                                          ORDER BY v.v), ''))::pg_catalog.pg_snapshot" \
	"   FROM (SELECT pg_catalog.pg_snapshot_xip(s.c) AS v UNION SELECT " own ") AS v" \
	"  WHERE v.v OPERATOR(pg_catalog.<) LEAST(pg_catalog.pg_snapshot_xmax(s.c), b.x))"

/* an event of a transaction that s.c sees finished and s.l did not */
#define OKNO_SQL_NEW_EVENT(e) \
	OKNO_SQL_NOT_COPIED(e, "s.l", "s.c") \
	" AND " e ".created_xid IS DISTINCT FROM $4"

/* the subscriber's row, locked unless another drain has it */
static OknoPlan lock_plan = {
	.sql =
	"SELECT copied_system FROM %1$s.okno_subscriber"
	" WHERE name OPERATOR(pg_catalog.=) $1 FOR NO KEY UPDATE SKIP LOCKED",
	.nargs = 1,
	.argtypes = {TEXTOID}
};

/*
 * step 2: the due rows of okno_delivery, picked as drain_outbox.c's drain_plan
 * picks from outbox; delivered by deleting a row that never failed, by
 * setting delivered_at on the others
 */
#define OKNO_SQL_PICK(F) \
	"WITH p AS MATERIALIZED (" \
	" SELECT p.ctid AS t, p.attempts OPERATOR(pg_catalog.=) 0 AND p.last_error IS NULL AS plain" \
	"   FROM %1$s.okno_delivery AS p" \
	"  WHERE" OKNO_SQL_DELIVERY_DUE(F, "p", "$2") \
	"  ORDER BY p.subscriber, p.event_id LIMIT $1 FOR UPDATE SKIP LOCKED)," \
	" x AS (" \
	" DELETE FROM %1$s.okno_delivery AS o" \
	"  WHERE o.ctid OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT p.t FROM p WHERE p.plain))" \
	"  RETURNING o.event_id, o.attempts, " F##_KEY_JSON("o." F##_DELIVERY_KEY) " AS k)," \
	" u AS (" \
	" UPDATE %1$s.okno_delivery AS o SET delivered_at = pg_catalog.clock_timestamp()" \
	"  WHERE o.ctid OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT p.t FROM p WHERE NOT p.plain))" \
	"  RETURNING o.event_id, o.attempts, " F##_KEY_JSON("o." F##_DELIVERY_KEY) " AS k)," \
	" d AS (SELECT * FROM x UNION ALL SELECT * FROM u)" \
	" SELECT d.event_id, e.kind::pg_catalog.text, e.payload, d.attempts, d.k" \
	"   FROM d JOIN %1$s.outbox AS e ON e.id OPERATOR(pg_catalog.=) d.event_id" \
	"  ORDER BY d.event_id"

/*
 * A word of the plan forms (base.h's OKNO_PLAN_FORMS) for this file: an
 * order key k as the jsonb the copy compares (step 3's $3), a JSON string
 * where okno_delivery's key is text, the booking (already jsonb) before
 * order keys
 */
#define OKNO_F_CURRENT_KEY_JSON(k)			"pg_catalog.to_jsonb(" k ")"
#define OKNO_F_UNPREPARED_KEY_JSON(k)		OKNO_F_CURRENT_KEY_JSON(k)
#define OKNO_F_NO_ORDER_KEYS_KEY_JSON(k)	k

static OknoPlan pick_plan = {
	OKNO_PLAN_FORMS(OKNO_SQL_PICK),
	.nargs = 2,
	.argtypes = {INT4OID, TEXTOID},
	.cursor_options = CURSOR_OPT_GENERIC_PLAN
};

/*
 * Where step 3's copy stops: the first, the last and the number of the first
 * $3 + 1 new events' transactions above the stored snapshot's xmax, in xid
 * order (read in the index's order: see plan_for_indexes).
 */
static OknoPlan cut_plan = {
	.sql =
	"SELECT pg_catalog.min(k.x), pg_catalog.max(k.x), pg_catalog.count(*) FROM ("
	" SELECT e.created_xid AS x FROM %1$s.outbox AS e"
	"  WHERE e.created_xid OPERATOR(pg_catalog.>=) (SELECT pg_catalog.pg_snapshot_xmax(u.copied_snapshot)"
	"          FROM %1$s.okno_subscriber AS u WHERE u.name OPERATOR(pg_catalog.=) $1)"
	"    AND e.created_xid OPERATOR(pg_catalog.<) pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())"
	"    AND pg_catalog.pg_visible_in_snapshot(e.created_xid, pg_catalog.pg_current_snapshot())"
	"    AND NOT pg_catalog.pg_visible_in_snapshot(e.created_xid, (SELECT u.copied_snapshot"
	"          FROM %1$s.okno_subscriber AS u WHERE u.name OPERATOR(pg_catalog.=) $1))"
	"    AND e.created_xid IS DISTINCT FROM $2"
	"  ORDER BY e.created_xid LIMIT $3 OPERATOR(pg_catalog.+) 1) AS k",
	.nargs = 3,
	.argtypes = {TEXTOID, XID8OID, INT4OID},
	.cursor_options = CURSOR_OPT_GENERIC_PLAN
};

/*
 * Step 3: copy the events committed since the stored snapshot, hand out up
 * to $2 of them that nothing holds back (not held by an undelivered row of
 * their booking, nor by the booking of one this batch handed out in step 2,
 * $3, nor by an earlier new event of their booking), store a pending row
 * for each of the others, store the new snapshot.
 *
 * One copy takes the new events of whole transactions, in xid order, up to
 * about $2 events (more when a single transaction has more): it stops
 * before $5, the transaction of the ($2 + 1)-th new event as cut_plan found
 * it (NULL: no stop), and the snapshot it stores is cut there, so the next
 * copy goes on from it.  A subscriber that was
 * away for a while catches up in steps, each drain writing about what it
 * hands out.  The cut is never below the stored snapshot's xmax: the
 * events of the transactions that were running then are always copied
 * together (otherwise the cut snapshot would forget what the stored one
 * had seen above it), and a stored snapshot never moves back (b.x is at
 * least its xmax whatever $5 says: a cut below it would make the next
 * copy hand out again what this subscriber was given).
 */
#define OKNO_SQL_COPY(F) \
	"WITH s AS MATERIALIZED (" \
	" SELECT u.copied_snapshot AS l, pg_catalog.pg_current_snapshot() AS c" \
	"   FROM %1$s.okno_subscriber AS u WHERE u.name OPERATOR(pg_catalog.=) $1)," \
	" b AS MATERIALIZED (" \
	" SELECT GREATEST(LEAST(COALESCE($5, pg_catalog.pg_snapshot_xmax(s.c))," \
	"                        pg_catalog.pg_snapshot_xmax(s.c))," \
	"                  pg_catalog.pg_snapshot_xmax(s.l)) AS x" \
	"   FROM s)," \
	" n AS MATERIALIZED (" \
	" SELECT e.id, e.kind::pg_catalog.text AS kind, e.payload," \
	"        " F##_STORED_KEY("e") " AS k," \
	"        e.kind OPERATOR(pg_catalog.=) 'booking_created' AS first" \
	"   FROM s, b, %1$s.outbox AS e" \
	"  WHERE e.created_xid OPERATOR(pg_catalog.<) b.x" \
	"    AND" OKNO_SQL_NEW_EVENT("e") ")," \
	" h AS MATERIALIZED (" \
	" SELECT n.*, NOT n.first AND n.k IS NOT NULL AND (" \
	"        pg_catalog.row_number() OVER (PARTITION BY n.k" \
	"          ORDER BY " OKNO_SQL_V7("n.id") ", n.id) OPERATOR(pg_catalog.>) 1" \
	"        OR (SELECT q.event_id FROM %1$s.okno_delivery AS q" \
	"             WHERE q.subscriber OPERATOR(pg_catalog.=) $1" \
	"               AND q." F##_DELIVERY_KEY " OPERATOR(pg_catalog.=) n.k" \
	"               AND q.delivered_at IS NULL" \
	"               AND" OKNO_SQL_EARLIER("q.event_id", "n.id") \
	"             LIMIT 1) IS NOT NULL" \
	"        OR " F##_KEY_JSON("n.k") " OPERATOR(pg_catalog.=) ANY ($3)) AS held" \
	"   FROM n)," \
	" r AS MATERIALIZED (" \
	" SELECT h.*, NOT h.held AND pg_catalog.row_number() OVER (PARTITION BY h.held ORDER BY h.id)" \
	"        OPERATOR(pg_catalog.<=) $2 AS go" \
	"   FROM h)," \
	" ins AS (" \
	" INSERT INTO %1$s.okno_delivery (subscriber, event_id, " F##_DELIVERY_KEY ", first)" \
	" SELECT $1, r.id, r.k, r.first FROM r WHERE NOT r.go)," \
	" upd AS (" \
	" UPDATE %1$s.okno_subscriber AS u SET copied_snapshot = " OKNO_SQL_NEW_SNAPSHOT("$4") "," \
	"        copied_at = pg_catalog.now()" \
	"   FROM s, b WHERE u.name OPERATOR(pg_catalog.=) $1)" \
	" SELECT r.id, r.kind, r.payload, 0 FROM r WHERE r.go ORDER BY r.id"

static OknoPlan copy_plan = {
	OKNO_PLAN_FORMS(OKNO_SQL_COPY),
	.nargs = 5,
	.argtypes = {TEXTOID, INT4OID, JSONBARRAYOID, XID8OID, XID8OID},
	.cursor_options = CURSOR_OPT_GENERIC_PLAN
};

/*
 * After a restore into another cluster: copy, as pending, every event since
 * the subscription began that the subscriber has no row for and had not
 * copied there, and start again from a snapshot of this cluster ($2: this
 * transaction's xid, $3: this cluster's system identifier).  An event with
 * a created_xid that began before the last copy was written in the other
 * cluster (the restore came after that copy), so its xid and the stored
 * snapshot are of the same cluster and compare exactly; one that began
 * after it may be of either, and is copied (at worst a second delivery of
 * an event of a transaction that began between the last copy's start and
 * its snapshot).  A NULL created_xid is an event every subscriber had
 * copied, or one written before outbox had the column (before the update
 * to 0.5.0).
 */
#define OKNO_SQL_REBASE(F) \
	"WITH s AS MATERIALIZED (" \
	" SELECT u.since, u.copied_at, u.copied_snapshot AS l, pg_catalog.pg_current_snapshot() AS c" \
	"   FROM %1$s.okno_subscriber AS u WHERE u.name OPERATOR(pg_catalog.=) $1)," \
	" ins AS (" \
	" INSERT INTO %1$s.okno_delivery (subscriber, event_id, " F##_DELIVERY_KEY ", first)" \
	" SELECT $1, e.id, " F##_STORED_KEY("e") "," \
	"        e.kind OPERATOR(pg_catalog.=) 'booking_created'" \
	"   FROM s, %1$s.outbox AS e" \
	"  WHERE e.created_at OPERATOR(pg_catalog.>=) s.since AND e.created_xid IS NOT NULL" \
	"    AND e.created_xid IS DISTINCT FROM $2" \
	"    AND (e.created_at OPERATOR(pg_catalog.>) s.copied_at" \
	"         OR NOT pg_catalog.pg_visible_in_snapshot(e.created_xid, s.l))" \
	"    AND NOT EXISTS (SELECT FROM %1$s.okno_delivery AS d" \
	"                     WHERE d.subscriber OPERATOR(pg_catalog.=) $1" \
	"                       AND d.event_id OPERATOR(pg_catalog.=) e.id)" \
	"  RETURNING 1)" \
	" UPDATE %1$s.okno_subscriber AS u SET copied_snapshot = " OKNO_SQL_NEW_SNAPSHOT("$2") "," \
	"        copied_system = $3, copied_at = pg_catalog.now()" \
	"   FROM s, (SELECT pg_catalog.pg_snapshot_xmax(s.c) AS x FROM s) AS b" \
	"  WHERE u.name OPERATOR(pg_catalog.=) $1" \
	" RETURNING (SELECT pg_catalog.count(*) FROM ins)"

static OknoPlan rebase_plan = {
	OKNO_PLAN_FORMS(OKNO_SQL_REBASE),
	.nargs = 3,
	.argtypes = {TEXTOID, XID8OID, INT8OID}
};

/*
 * The plans above are generic and kept for the session, and okno_delivery
 * starts empty: planned on its statistics then, they would scan it whole
 * (and sort every new event instead of reading outbox_created_xid in order)
 * for as long as the session lasts, or until an ANALYZE.  So they are run,
 * and planned, with sequential scans discouraged, as a function's SET
 * clause would (the settings end with the returned nest level); cut_plan
 * with sorts discouraged as well, so that it reads outbox_created_xid in
 * order and stops, however many events a subscriber that was away has
 * waiting.
 */
static int
plan_for_indexes(bool nosort)
{
	int			nestlevel = NewGUCNestLevel();

	(void) set_config_option("enable_seqscan", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	if (nosort)
		(void) set_config_option("enable_sort", "off", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	return nestlevel;
}

/* compare the first (uuid) columns of two rows */
static int
row_cmp(SPITupleTable *a, uint64 i, SPITupleTable *b, uint64 j)
{
	bool		isnull;
	Datum		x = SPI_getbinval(a->vals[i], a->tupdesc, 1, &isnull);
	Datum		y = SPI_getbinval(b->vals[j], b->tupdesc, 1, &isnull);

	return memcmp(DatumGetUUIDP(x), DatumGetUUIDP(y), UUID_LEN);
}

static void
put_row(ReturnSetInfo *rsinfo, SPITupleTable *t, uint64 i, int ncols)
{
	Datum		values[4];
	bool		nulls[4];
	int			col;

	for (col = 0; col < ncols; col++)
		values[col] = SPI_getbinval(t->vals[i], t->tupdesc, col + 1, &nulls[col]);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * Step 1: lock the subscriber's row (false: another drain is copying, or
 * there is no such subscriber: subscriber_missing); a snapshot of another
 * cluster is rebased first, so that what may be missing is copied again.
 */
static bool
lock_subscriber(Datum name, const char *subscriber)
{
	Datum		args[3];
	bool		isnull;
	int			rc;

	rc = SPI_execute_plan(okno_plan(&lock_plan), &name, NULL, false, 1);
	okno_check_spi(rc, SPI_OK_SELECT, "subscriber lock");
	if (SPI_processed != 1)
	{
		okno_subscriber_check(subscriber);
		return false;
	}
	if (DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
									1, &isnull)) != (int64) GetSystemIdentifier())
	{
		args[0] = name;
		args[1] = FullTransactionIdGetDatum(GetTopFullTransactionId());
		args[2] = Int64GetDatum((int64) GetSystemIdentifier());
		rc = SPI_execute_plan(okno_plan(&rebase_plan), args, NULL, false, 0);
		okno_check_spi(rc, SPI_OK_UPDATE_RETURNING, "subscriber rebase");
	}
	return true;
}

/*
 * Step 3's bound: the xid below which the copy of at most room events
 * stops, in *stop and *stopnull (null: no bound, everything new fits).
 * In a snapshot of its own, taken after the row lock, as the copy's is: the
 * statement's snapshot can predate the commit of another drain's copy that
 * the lock waited for or came after, and a stop found from the stored
 * snapshot that one shows would lie below the stored position, which the
 * copy would then move back.
 */
static void
copy_bound(Datum name, int32 room, Datum *stop, char *stopnull)
{
	Datum		args[3];
	bool		isnull;
	int			rc;
	int			sortlevel;
	FullTransactionId first;
	FullTransactionId last;
	HeapTuple	row;
	TupleDesc	desc;

	args[0] = name;
	args[1] = FullTransactionIdGetDatum(GetTopFullTransactionId());
	args[2] = Int32GetDatum(room);
	sortlevel = plan_for_indexes(true);
	rc = SPI_execute_plan(okno_plan(&cut_plan), args, NULL, false, 1);
	AtEOXact_GUC(true, sortlevel);
	okno_check_spi(rc, SPI_OK_SELECT, "subscriber copy bound");
	row = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	*stop = (Datum) 0;
	*stopnull = 'n';
	if (DatumGetInt64(SPI_getbinval(row, desc, 3, &isnull)) <= room)
		return;
	first = DatumGetFullTransactionId(SPI_getbinval(row, desc, 1, &isnull));
	last = DatumGetFullTransactionId(SPI_getbinval(row, desc, 2, &isnull));
	/* a single transaction has more than room: all of it */
	if (FullTransactionIdEquals(first, last))
		FullTransactionIdAdvance(&last);
	*stop = FullTransactionIdGetDatum(last);
	*stopnull = ' ';
}

/*
 * Step 3: copy (and hand out) up to room events committed since the last
 * copy, the order keys of the npicked events step 2 handed out held back
 * behind them; the copied rows are the current SPI result.
 */
static void
copy_new(Datum name, int32 room, SPITupleTable *picked, uint64 npicked)
{
	Datum	   *keys = palloc(sizeof(Datum) * (npicked + 1));
	int			nkeys = 0;
	Datum		args[5];
	char		nulls[5];
	bool		isnull;
	uint64		i;
	int			rc;

	memset(nulls, ' ', sizeof(nulls));
	copy_bound(name, room, &args[4], &nulls[4]);
	/* the order keys of the events step 2 handed out (NULL: none) */
	for (i = 0; i < npicked; i++)
	{
		Datum		k = SPI_getbinval(picked->vals[i], picked->tupdesc, 5, &isnull);

		if (!isnull)
			keys[nkeys++] = k;
	}
	args[0] = name;
	args[1] = Int32GetDatum(room);
	args[2] = PointerGetDatum(construct_array(keys, nkeys, JSONBOID,
											  -1, false, TYPALIGN_INT));
	args[3] = FullTransactionIdGetDatum(GetTopFullTransactionId());
	rc = SPI_execute_plan(okno_plan(&copy_plan), args, nulls, false, 0);
	okno_check_spi(rc, SPI_OK_SELECT, "subscriber copy");
}

/*
 * Drain up to max_events events due for subscriber (not the default one)
 * into rsinfo's result set (made ready by the caller), in id order, and
 * return how many.
 */
uint64
okno_drain_subscriber(ReturnSetInfo *rsinfo, const char *subscriber,
					  int32 max_events, int ncols)
{
	Datum		name = CStringGetTextDatum(subscriber);
	Datum		args[2];
	bool		locked;
	SPITupleTable *picked;
	uint64		npicked;
	SPITupleTable *copied = NULL;
	uint64		ncopied = 0;
	uint64		i;
	uint64		j;
	int			rc;
	int			nestlevel;
	OknoGuard	guard;

	okno_guard_begin(&guard);
	okno_spi_connect();
	nestlevel = plan_for_indexes(false);

	/* 1: the row lock, or another drain is copying */
	locked = lock_subscriber(name, subscriber);

	/* 2: the due rows already copied */
	args[0] = Int32GetDatum(max_events);
	args[1] = name;
	rc = SPI_execute_plan(okno_plan(&pick_plan), args, NULL, false, 0);
	okno_check_spi(rc, SPI_OK_SELECT, "subscriber drain");
	picked = SPI_tuptable;
	npicked = SPI_processed;

	/* 3: the events committed since the last copy */
	if (locked && npicked < (uint64) max_events)
	{
		copy_new(name, max_events - (int32) npicked, picked, npicked);
		copied = SPI_tuptable;
		ncopied = SPI_processed;
	}

	AtEOXact_GUC(true, nestlevel);

	/* both in id order: merge them */
	i = j = 0;
	while (i < npicked || j < ncopied)
	{
		CHECK_FOR_INTERRUPTS();
		if (j >= ncopied || (i < npicked && row_cmp(picked, i, copied, j) < 0))
			put_row(rsinfo, picked, i++, ncols);
		else
			put_row(rsinfo, copied, j++, ncols);
	}
	okno_spi_finish();
	okno_guard_end(&guard);
	return npicked + ncopied;
}
