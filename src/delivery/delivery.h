/*-------------------------------------------------------------------------
 *
 * delivery.h
 *	  The delivery group: handing events out and keeping their delivery
 *	  state, for the default subscriber and for named ones.
 *
 * Owns: where a subscriber's delivery state lives and the statements that
 * read and change it, one table of routines per kind of subscriber
 * (routine.c); the SQL drains' entry (drain.c) and the two drains the
 * routines name, the outbox's own for the default subscriber
 * (drain_outbox.c, with its per-backend cursor and the drain hint) and a
 * named subscriber's over okno_delivery (drain_subscriber.c); the "all rows
 * read" watch on a drain's result (handout.c); okno_wait (wait.c); the
 * subscribers and their names (subscriber.c); failures, retries and the
 * settings okno.retry_base, okno.retry_cap and okno.max_attempts
 * (failure.c); parked events (deadletter.c).  The rule that says an event
 * is due is written once, below, for the drains and the wait alike.
 *
 * May call: outbox (to wake waiters when an event is due again), base and
 * pure.  Nothing below calls up into this group.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_DELIVERY_H
#define OKNO_DELIVERY_H

#include "base/base.h"
#include "outbox/outbox.h"

/*
 * The condition that event p (an alias of outbox in the query) is not held
 * back: no earlier event of its order key (base.h's OKNO_SQL_ORDER_KEY: a
 * booking's id, or okno_emit's order key) is undelivered.  An event
 * without a key is in no group.  A booking_created event is the first of
 * its booking by construction (the booking and its event are written in
 * one transaction, and nothing okno writes can name the booking before
 * that commits), so only the other kinds are looked up: the common case
 * costs a string comparison.  "Earlier" is id order, except that an id
 * that is not a UUID version 7 (the course's events, adopted) comes before
 * every version 7 id.  The lookup runs on the index outbox_order_key,
 * whose expression and predicate it repeats, once per candidate: a scalar
 * subquery with LIMIT, which the planner keeps as a per-row probe (a NOT
 * EXISTS would become an anti-join that hashes every undelivered event
 * before the first one is picked).  F is the plan form (base.h's
 * OKNO_PLAN_FORMS: where outbox has no order_key, in an okno installed
 * before 0.7.0 or until okno_prepare_tables() adds it, the key is the
 * booking of payload -> 'booking_id', on the index outbox_order).
 */
#define OKNO_SQL_NOT_HELD_BACK(F, p, q_in) \
	" AND (" p ".kind OPERATOR(pg_catalog.=) 'booking_created'" \
	"  OR " F##_ORDER_KEY(p) " IS NULL" \
	"  OR (SELECT q.id FROM %1$s.outbox AS q" \
	"   WHERE " F##_ORDER_KEY("q") " OPERATOR(pg_catalog.=) " F##_ORDER_KEY(p) q_in \
	"     AND q.delivered_at IS NULL AND q.id OPERATOR(pg_catalog.<>) " p ".id" \
	"     AND" OKNO_SQL_EARLIER("q.id", p ".id") \
	"   LIMIT 1) IS NULL)"

/*
 * Row p of okno_delivery is due for the subscriber named by parameter s:
 * undelivered, not parked, not delayed, and no earlier event of its order
 * key undelivered (drain_subscriber.c's pick, wait.c's check), in plan
 * form F.  OKNO_SQL_DELIVERY_DUE_AT is the same at time now, with the
 * earlier events looked for among those q_in restricts them to
 * (drain_buckets.c's, where Citus has the named subscribers: a statement
 * of one shard's buckets).
 */
#define OKNO_SQL_DELIVERY_DUE_AT(F, p, s, now, q_in) \
	" " p ".subscriber OPERATOR(pg_catalog.=) " s \
	" AND " p ".delivered_at IS NULL AND " p ".parked_at IS NULL" \
	" AND (" p ".available_at IS NULL" \
	"      OR " p ".available_at OPERATOR(pg_catalog.<=) " now ")" \
	" AND (" p ".first OR (SELECT q.event_id FROM %1$s.okno_delivery AS q" \
	"   WHERE q.subscriber OPERATOR(pg_catalog.=) " s q_in \
	"     AND q." F##_DELIVERY_KEY " OPERATOR(pg_catalog.=) " p "." F##_DELIVERY_KEY \
	"     AND q.delivered_at IS NULL" \
	"     AND q.event_id OPERATOR(pg_catalog.<>) " p ".event_id" \
	"     AND" OKNO_SQL_EARLIER("q.event_id", p ".event_id") \
	"   LIMIT 1) IS NULL)"
#define OKNO_SQL_DELIVERY_DUE(F, p, s) \
	OKNO_SQL_DELIVERY_DUE_AT(F, p, s, "pg_catalog.clock_timestamp()", "")

/*
 * Event e was written by a transaction that snapshot cur sees finished and
 * the subscriber's stored snapshot did not: the subscriber has not copied
 * it yet (drain_subscriber.c's copy, wait.c's check)
 */
#define OKNO_SQL_NOT_COPIED(e, stored, cur) \
	" " e ".created_xid OPERATOR(pg_catalog.>=) pg_catalog.pg_snapshot_xmin(" stored ")" \
	" AND pg_catalog.pg_visible_in_snapshot(" e ".created_xid, " cur ")" \
	" AND NOT pg_catalog.pg_visible_in_snapshot(" e ".created_xid, " stored ")"

/*
 * Outbox row p is due for the default subscriber: undelivered, not parked,
 * not delayed, not held back, and after id bound "after" (a drain's or
 * wait's scan start), in plan form F.  The drains (drain_outbox.c) and the
 * wait (wait.c) both use it.  OKNO_SQL_OUTBOX_DUE_AT is the same with the
 * time "now" given and the earlier events looked for among those q_in
 * restricts them to (drain_buckets.c's, where Citus distributes outbox by
 * bucket: a statement of one shard's buckets, at a time passed in).
 */
#define OKNO_SQL_OUTBOX_DUE_AT(F, p, after, now, q_in) \
	" " p ".delivered_at IS NULL AND " p ".parked_at IS NULL" \
	" AND " p ".id OPERATOR(pg_catalog.>) " after \
	" AND (" p ".available_at IS NULL" \
	"      OR " p ".available_at OPERATOR(pg_catalog.<=) " now ")" \
	OKNO_SQL_NOT_HELD_BACK(F, p, q_in)
#define OKNO_SQL_OUTBOX_DUE(F, p, after) \
	OKNO_SQL_OUTBOX_DUE_AT(F, p, after, "pg_catalog.clock_timestamp()", "")

/*
 * The default subscriber's drain (drain_outbox.c; drain_buckets.c's of one
 * shard): the pick takes the first due rows by id ($1 of them, after id
 * $2) that no earlier event of their order key holds back, judged in the
 * statement's snapshot: an event delivered in this batch still holds its
 * key's later events back until the next drain.  F is the plan form
 * (base.h); set names what the update sets besides delivered_at, which it
 * sets to now; in(e) restricts outbox row e (o updated, p picked, q
 * earlier) to a shard's buckets, OKNO_SQL_ANY_BUCKET to none.
 */
#define OKNO_SQL_ANY_BUCKET(e) ""
#define OKNO_SQL_DRAIN_AT(F, set, now, in) \
	"WITH delivered AS (" \
	" UPDATE %1$s.outbox AS o SET delivered_at = " now set \
	"  WHERE o.id OPERATOR(pg_catalog.=) ANY (ARRAY(" \
	"   SELECT p.id FROM %1$s.outbox AS p" \
	"    WHERE" OKNO_SQL_OUTBOX_DUE_AT(F, "p", "$2", now, in("q")) in("p") \
	"    ORDER BY p.id LIMIT $1 FOR UPDATE SKIP LOCKED))" in("o") \
	"  RETURNING o.id, o.kind::pg_catalog.text AS kind, o.payload, o.attempts)" \
	" SELECT id, kind, payload, attempts FROM delivered ORDER BY id"

/*
 * A subscriber's delivery state and what reads and changes it, one table
 * for each kind of subscriber (routine.c): the default one's state is
 * outbox's own columns, a named one's its rows of okno_delivery.  A verb
 * chooses the table once, from its subscriber argument, and is written
 * once against it.  Per-event statements take ($1 event id, $2 subscriber,
 * ...).
 */
typedef enum OknoFailForm
{
	OKNO_FAIL_ROW,				/* the state's row (the default's: outbox) */
	OKNO_FAIL_COLUMNS,			/* okno's columns of it (0.6.0's OUT parameters) */
	OKNO_FAIL_DELIVERY,			/* the state as a row of okno_delivery */
	OKNO_FAIL_NFORMS
} OknoFailForm;

typedef struct OknoDeliveryRoutine
{
	const char *table;			/* where the state lives, for messages */
	/* hand due events out into rsinfo (drain_outbox.c, drain_subscriber.c) */
	uint64		(*drain) (ReturnSetInfo *rsinfo, const char *subscriber,
						  int32 max_events, int ncols);
	/* write the missing row of an event handed out as it was copied */
	bool		(*adopt) (Datum id, Datum subscriber);
	/*
	 * the event's bucket for event id: the per-event statements' $2
	 * instead of the subscriber, or, with route_last, their last argument
	 */
	Datum		(*route) (Datum id);
	bool		route_last;
	OknoPlan   *lock;			/* attempts, parked: FOR UPDATE */
	OknoPlan   *fail[OKNO_FAIL_NFORMS];	/* ($3 attempts, $4 error, $5
										 * available_at, $6 parked_at) */
	OknoPlan   *release;		/* delivered → pending */
	OknoPlan   *requeue;		/* parked → pending, attempts 0 */
	OknoPlan   *requeue_parked; /* ($1 kind, $2 error_like, $3 parked_before,
								 * $4 subscriber or NULL: all) */
	OknoPlan   *discard_lock;	/* kind, payload, attempts, last_error,
								 * parked_at of a parked event */
	OknoPlan   *discard_done;	/* ($3 when) */
	OknoPlan   *next_due;		/* ($1 subscriber) a delay's end, or NULL */
} OknoDeliveryRoutine;

/* routine.c */
extern const OknoDeliveryRoutine okno_default_routine;
extern const OknoDeliveryRoutine okno_named_routine;
extern const OknoDeliveryRoutine okno_bucket_routine;
extern const OknoDeliveryRoutine okno_one_shard_routine;
extern const OknoDeliveryRoutine okno_named_bucket_routine;
extern const OknoDeliveryRoutine *okno_delivery_routine(const char *subscriber,
														Datum *arg, char *argnull);
extern uint64 okno_delivery_exec(const OknoDeliveryRoutine *r, OknoPlan *plan,
								 Datum *values, const char *nulls, int nvalues,
								 bool adopt, int expected, const char *what);

/* drain.c: the SQL drains; the group's init */
extern void okno_delivery_init(void);

/* drain_outbox.c: the default subscriber's drain, from outbox */
extern void okno_drain_outbox_init(void);
extern uint64 okno_drain_outbox(ReturnSetInfo *rsinfo, int32 max_events, int ncols);
extern uint64 okno_drain_outbox_0_1(ReturnSetInfo *rsinfo);

/* drain_buckets.c: the same where Citus distributes outbox by bucket */
extern uint64 okno_drain_buckets(ReturnSetInfo *rsinfo, int32 max_events, int ncols);
extern uint64 okno_drain_named_buckets(ReturnSetInfo *rsinfo, const char *subscriber,
									   int32 max_events, int ncols);
extern bool okno_buckets_due(const char *subscriber);
extern void okno_drain_forget_cursor(void);
extern bool okno_drain_scan_start(pg_uuid_t *lower);

/* drain_subscriber.c: a named subscriber's drain, from okno_delivery */
extern uint64 okno_drain_subscriber(ReturnSetInfo *rsinfo, const char *subscriber,
									int32 max_events, int ncols);

/* handout.c */
extern void okno_handout_init(void);
extern void okno_handout_watch(FunctionCallInfo fcinfo, const char *fname, uint64 rows);

/* wait.c */
extern void okno_wait_init(void);

/* subscriber.c */
extern char *okno_subscriber_arg(text *arg, const char *fname);
extern char *okno_subscriber_named(FunctionCallInfo fcinfo, int argno, const char *fname);
extern char *okno_subscriber_of(FunctionCallInfo fcinfo, int argno, const char *fname);
extern void okno_subscriber_check(const char *name);
extern bool okno_subscriber_horizon(FullTransactionId *horizon);

/* failure.c */
extern void okno_failure_init(void);

#endif							/* OKNO_DELIVERY_H */
