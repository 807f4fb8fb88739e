/*-------------------------------------------------------------------------
 *
 * outbox.h
 *	  The outbox group: writing an event, and the wake-up its commit sends.
 *
 * Owns: a new event's id (UUID version 7), its row in outbox, the NOTIFY
 * and the setting okno.notify (event.c); waking the relays that wait in
 * okno_wait when the transaction that wrote or released an event commits,
 * the tags those waiters and prepared transactions hold (wake.c);
 * okno_emit, an event from any function (emit.c); where Citus has okno's
 * named subscribers, their rows of each event, written with it
 * (fan_out.c).  The
 * wait itself is delivery's (delivery/wait.c): it holds the tags this
 * group looks up, and nothing here calls it.
 *
 * Owns too the order key of an event in SQL, and its words in the plan
 * forms (base.h), for the drains, the wait, the counts and the index that
 * serves them.
 *
 * May call: base and pure only.  The booking group writes its events
 * here, delivery wakes waiters through it when it makes an event due
 * again, and delivery and maintenance read the order key's SQL here.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_OUTBOX_H
#define OKNO_OUTBOX_H

#include "base/base.h"

#define OKNO_EVENT_BOOKING_CREATED		"booking_created"
#define OKNO_EVENT_BOOKING_CANCELLED	"booking_cancelled"
#define OKNO_NOTIFY_CHANNEL				"okno_outbox"

/*
 * An event's order key, in SQL (okno 0.7.0): the events of one key are
 * handed out in order.  A booking's events (okno's kinds booking_created
 * and booking_cancelled) have their booking's id, as text, whoever wrote
 * them (the course's service too); every other event has the order_key
 * okno_emit gave it, NULL for none.  The index outbox_order_key repeats
 * the expression (maintenance/prepare.c).  Before 0.7.0 the key was the
 * jsonb payload -> 'booking_id' of any event (OKNO_SQL_ORDER_KEY_0_6).
 */
#define OKNO_SQL_ORDER_KEY(e) \
	"(CASE WHEN " e ".kind OPERATOR(pg_catalog.=) '" OKNO_EVENT_BOOKING_CREATED "'" \
	" OR " e ".kind OPERATOR(pg_catalog.=) '" OKNO_EVENT_BOOKING_CANCELLED "'" \
	" THEN " e ".payload OPERATOR(pg_catalog.->>) 'booking_id' ELSE " e ".order_key END)"
#define OKNO_SQL_ORDER_KEY_0_6(e) \
	"(" e ".payload OPERATOR(pg_catalog.->) 'booking_id')"
/*
 * Until the tables' owner prepares them for okno 0.7.0 (okno_prepare_tables()
 * adds outbox.order_key), okno 0.7.0 and later serve them as before: on
 * outbox the order key is 0.6.0's, OKNO_SQL_ORDER_KEY_0_6 (on its index
 * outbox_order), and where it meets okno_delivery's order_key (text since
 * 0.7.0) it is that key as text, which for a booking's events is their
 * booking's id, as OKNO_SQL_ORDER_KEY has it.  Only okno_emit's order keys
 * need the column.
 */
#define OKNO_SQL_ORDER_KEY_UNPREPARED(e) \
	"(" OKNO_SQL_ORDER_KEY_0_6(e) " OPERATOR(pg_catalog.#>>) '{}'::pg_catalog.text[])"
/* okno_delivery's order key column (0.7.0), and okno 0.5.0's */
#define OKNO_DELIVERY_KEY		"order_key"
#define OKNO_DELIVERY_KEY_0_6	"booking"

/*
 * The order keys' words of the plan forms (base.h's OKNO_PLAN_FORMS):
 *	 F##_ORDER_KEY(e)	outbox row e's order key, as outbox rows compare it
 *	 F##_STORED_KEY(e)	the same, as okno_delivery's key column holds it
 *	 F##_DELIVERY_KEY	that column's name
 */
#define OKNO_F_CURRENT_ORDER_KEY(e)			OKNO_SQL_ORDER_KEY(e)
#define OKNO_F_CURRENT_STORED_KEY(e)		OKNO_SQL_ORDER_KEY(e)
#define OKNO_F_CURRENT_DELIVERY_KEY			OKNO_DELIVERY_KEY
#define OKNO_F_UNPREPARED_ORDER_KEY(e)		OKNO_SQL_ORDER_KEY_0_6(e)
#define OKNO_F_UNPREPARED_STORED_KEY(e)		OKNO_SQL_ORDER_KEY_UNPREPARED(e)
#define OKNO_F_UNPREPARED_DELIVERY_KEY		OKNO_DELIVERY_KEY
#define OKNO_F_NO_ORDER_KEYS_ORDER_KEY(e)	OKNO_SQL_ORDER_KEY_0_6(e)
#define OKNO_F_NO_ORDER_KEYS_STORED_KEY(e)	OKNO_SQL_ORDER_KEY_0_6(e)
#define OKNO_F_NO_ORDER_KEYS_DELIVERY_KEY	OKNO_DELIVERY_KEY_0_6

/* event.c */
extern void okno_outbox_init(void);
extern void okno_new_event_id(pg_uuid_t *id);
extern void okno_store_event(pg_uuid_t *id, const char *kind, Jsonb *payload,
							 const char *order_key);
extern void okno_insert_event(const char *kind, Jsonb *payload, const char *order_key);
extern void okno_notify(void);

/* fan_out.c: named subscribers' rows where Citus has them */
extern bool okno_named_on_citus(void);
extern void okno_fan_out_lock(void);
extern void okno_fan_out_event(const pg_uuid_t *id, int32 bucket, const char *kind,
							   const char *order_key);

/* emit.c */
extern void okno_lock_order_key(const char *key, int len);

/*
 * shards.c: outbox's shards where Citus distributes it by bucket (or keeps
 * it in one shard), in the shards' order, the same on every node:
 * statements that wait for locks go so, and never deadlock on each other
 */
typedef struct OknoOutboxShard
{
	Datum		buckets;		/* int4[] */
	bool		here;			/* placed on this node */
} OknoOutboxShard;

typedef struct OknoOutboxShards
{
	uint64		generation;		/* of the binding they were found under */
	int			nshards;
	OknoOutboxShard *shard;
	int			nhere;			/* how many are placed on this node */
} OknoOutboxShards;

extern const OknoOutboxShards *okno_outbox_shards(void);
extern uint64 okno_outbox_shards_exec(OknoPlan *plan, const Datum *values, const char *nulls,
									  int expected, const char *what);

/* event_bucket.c: where Citus distributes outbox by an event's bucket */
extern int32 okno_event_bucket(const char *key, const pg_uuid_t *id);

/* wake.c */
#define OKNO_WAIT_TAG_WAITERS	0
#define OKNO_WAIT_TAG_PREPARED	1
extern void okno_wake_init(void);
extern void okno_wait_tag(LOCKTAG *tag, uint32 which);
extern void okno_wake_at_commit(void);

#endif							/* OKNO_OUTBOX_H */
