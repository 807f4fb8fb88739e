/*-------------------------------------------------------------------------
 *
 * okno.h
 *	  Declarations shared by okno's PostgreSQL glue.
 *
 * The pure parts of okno (rfc3339.h, canonical.h, uuid7.h) do not include
 * this file; everything here needs postgres.h.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_H
#define OKNO_H

#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "executor/spi.h"
#include "nodes/parsenodes.h"
#include "storage/lock.h"
#include "utils/rel.h"
#include "utils/jsonb.h"
#include "utils/uuid.h"

/*
 * A booking request after validation: both instants as Unix microseconds,
 * and the offsets they were written with (minutes east of UTC), which only
 * the course's fingerprint form (version 0) depends on.
 */
typedef struct OknoBookingIn
{
	int32		resource_id;
	int64		starts_us;
	int64		ends_us;
	int16		starts_offset;
	int16		ends_offset;
} OknoBookingIn;

/* Length of a SHA-256 fingerprint written as lowercase hex. */
#define OKNO_FINGERPRINT_LEN 64

/* The fingerprint_version that names the canonical form of canonical.c. */
#define OKNO_FINGERPRINT_VERSION 1

/*
 * The fingerprint_version of keys the course's own service stored (before a
 * database was adopted, or beside okno): SHA-256 of pydantic 2's JSON of
 * the request, instants at the offsets the client sent (canonical.c).
 */
#define OKNO_FINGERPRINT_COURSE 0

/*
 * A SPI plan whose text names okno's schema.  The text holds "%1$s" where
 * the quoted schema name goes; okno_plan() prepares it once per backend (and
 * again after the extension's objects change) and keeps it.  A plan that is
 * run very often and whose best shape does not depend on its parameters'
 * values (the drains') sets cursor_options to CURSOR_OPT_GENERIC_PLAN.
 */
typedef struct OknoPlan
{
	const char *sql;
	int			nargs;
	Oid			argtypes[11];
	int			cursor_options; /* CURSOR_OPT_GENERIC_PLAN: see okno_plan() */
	SPIPlanPtr	plan;
	uint64		generation;
} OknoPlan;

/* okno.c: settings */
extern PGDLLIMPORT int okno_retry_base_ms;
extern PGDLLIMPORT int okno_retry_cap_ms;
extern PGDLLIMPORT int okno_max_attempts;
extern PGDLLIMPORT bool okno_notify_enabled;

/*
 * okno's relations whose OIDs okno.c caches: the application's five tables
 * that okno binds to (bind.c), then their primary keys' indexes that okno
 * scans directly
 */
typedef enum OknoRel
{
	OKNO_REL_ACTORS,
	OKNO_REL_RESOURCES,
	OKNO_REL_BOOKINGS,
	OKNO_REL_IDEMPOTENCY,
	OKNO_REL_OUTBOX,
	OKNO_REL_ACTORS_PKEY,
	OKNO_REL_RESOURCES_PKEY,
	OKNO_REL_IDEMPOTENCY_PKEY,
	OKNO_NUM_RELS
} OknoRel;

#define OKNO_NUM_TABLES (OKNO_REL_OUTBOX + 1)

/* okno.c */
extern const char *okno_schema_name(void);
extern Oid	okno_relid(OknoRel rel);
extern Oid	okno_relid_by_name(const char *relname);
extern uint64 okno_cache_generation(void);
extern SPIPlanPtr okno_plan(OknoPlan *p);
extern void okno_spi_connect(void);
extern void okno_spi_finish(void);
extern void okno_check_spi(int rc, int expected, const char *what);

/* owner.c: a superuser's call runs as the tables' owner */
typedef struct OknoGuard
{
	bool		switched;
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
} OknoGuard;

extern void okno_guard_begin(OknoGuard *guard);
extern void okno_guard_begin_owner(OknoGuard *guard, Oid owner);
extern void okno_guard_end(OknoGuard *guard);

/* handout.c */
extern void okno_handout_init(void);
extern void okno_handout_watch(FunctionCallInfo fcinfo, const char *fname, uint64 rows);

/*
 * The condition that event p (an alias of outbox in the query) is not held
 * back: no earlier event of its booking is undelivered.  A booking_created
 * event is the first of its booking by construction (the booking and its
 * event are written in one transaction, and nothing else can name the
 * booking before that commits), so only the later kinds are looked up: the
 * common case costs a string comparison.  "Earlier" is id order, except
 * that an id that is not a UUID version 7 (the course's events, adopted)
 * comes before every version 7 id.  The lookup runs on the index
 * outbox_order, whose expression and predicate it repeats, once per
 * candidate: a scalar subquery with LIMIT, which the planner keeps as a
 * per-row probe (a NOT EXISTS would become an anti-join that hashes every
 * undelivered event before the first one is picked).  The plan texts that
 * use it name okno's schema as %1$s.
 */
#define OKNO_SQL_V7(id) \
	"(pg_catalog.get_byte(pg_catalog.uuid_send(" id "), 6) OPERATOR(pg_catalog./) 16" \
	" OPERATOR(pg_catalog.=) 7)"
/* event id a comes before event id b (ids of one booking's events) */
#define OKNO_SQL_EARLIER(a, b) \
	" CASE WHEN " OKNO_SQL_V7(a) " OPERATOR(pg_catalog.=) " OKNO_SQL_V7(b) \
	"      THEN " a " OPERATOR(pg_catalog.<) " b \
	"      ELSE " OKNO_SQL_V7(b) " END"
#define OKNO_SQL_NOT_HELD_BACK(p) \
	" AND (" p ".kind OPERATOR(pg_catalog.=) 'booking_created'" \
	"  OR (SELECT q.id FROM %1$s.outbox AS q" \
	"   WHERE (q.payload OPERATOR(pg_catalog.->) 'booking_id')" \
	"         OPERATOR(pg_catalog.=) (" p ".payload OPERATOR(pg_catalog.->) 'booking_id')" \
	"     AND q.delivered_at IS NULL AND q.id OPERATOR(pg_catalog.<>) " p ".id" \
	"     AND" OKNO_SQL_EARLIER("q.id", p ".id") \
	"   LIMIT 1) IS NULL)"

/*
 * Row p of okno_delivery is due for the subscriber named by parameter s:
 * undelivered, not parked, not delayed, and no earlier event of its
 * booking undelivered (delivery.c's pick, wait.c's check)
 */
#define OKNO_SQL_DELIVERY_DUE(p, s) \
	" " p ".subscriber OPERATOR(pg_catalog.=) " s \
	" AND " p ".delivered_at IS NULL AND " p ".parked_at IS NULL" \
	" AND (" p ".available_at IS NULL" \
	"      OR " p ".available_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp())" \
	" AND (" p ".first OR (SELECT q.event_id FROM %1$s.okno_delivery AS q" \
	"   WHERE q.subscriber OPERATOR(pg_catalog.=) " s \
	"     AND q.booking OPERATOR(pg_catalog.=) " p ".booking" \
	"     AND q.delivered_at IS NULL" \
	"     AND q.event_id OPERATOR(pg_catalog.<>) " p ".event_id" \
	"     AND" OKNO_SQL_EARLIER("q.event_id", p ".event_id") \
	"   LIMIT 1) IS NULL)"

/*
 * Event e was written by a transaction that snapshot cur sees finished and
 * the subscriber's stored snapshot did not: the subscriber has not copied
 * it yet (delivery.c's copy, wait.c's check)
 */
#define OKNO_SQL_NOT_COPIED(e, stored, cur) \
	" " e ".created_xid OPERATOR(pg_catalog.>=) pg_catalog.pg_snapshot_xmin(" stored ")" \
	" AND pg_catalog.pg_visible_in_snapshot(" e ".created_xid, " cur ")" \
	" AND NOT pg_catalog.pg_visible_in_snapshot(" e ".created_xid, " stored ")"

/* drain.c */
extern void okno_drain_init(void);
extern void okno_drain_forget_cursor(void);
extern bool okno_drain_scan_start(pg_uuid_t *lower);

/* subscriber.c */
#define OKNO_DEFAULT_SUBSCRIBER "default"
extern char *okno_subscriber_arg(text *arg, const char *fname);
extern char *okno_subscriber_named(FunctionCallInfo fcinfo, int argno, const char *fname);
extern char *okno_subscriber_of(FunctionCallInfo fcinfo, int argno, const char *fname);
extern void okno_subscriber_check(const char *name);
extern bool okno_subscriber_horizon(FullTransactionId *horizon);

/* delivery.c */
extern void okno_deliver_drain(FunctionCallInfo fcinfo, const char *fname,
							   const char *subscriber, int32 max_events, int ncols);

/* key.c */
extern void okno_check_key(text *key);

/* payload.c */
extern void okno_parse_payload(Jsonb *payload, OknoBookingIn *out);
extern TimestampTz okno_unix_us_to_timestamptz(int64 unix_us);
extern int64 okno_timestamptz_to_unix_us(TimestampTz ts);
extern int64 okno_now_unix_us(void);

/* fingerprint.c */
extern bool okno_fingerprint_known(int version);
extern void okno_fingerprint_hex(const OknoBookingIn *in, int version,
								 char hex[OKNO_FINGERPRINT_LEN + 1]);

/* lock.c */
extern void okno_lock_request(int32 actor, text *key);
extern void okno_lock_resource(int32 resource_id);
#define OKNO_WAIT_TAG_WAITERS	0
#define OKNO_WAIT_TAG_PREPARED	1
extern void okno_wait_tag(LOCKTAG *tag, uint32 which);

/* response.c */
extern Jsonb *okno_booking_card(int64 id, int32 actor, const OknoBookingIn *in,
								const char *status);
extern Jsonb *okno_event_payload(int64 booking_id);

/* relation.c: the range table of a statement that a direct path replaces */
typedef struct OknoRangeTable
{
	List	   *rtable;			/* RangeTblEntry */
	List	   *perminfos;		/* RTEPermissionInfo (PostgreSQL 16 and later) */
} OknoRangeTable;

extern void okno_rt_add(OknoRangeTable *rt, Oid relid, AclMode perms,
						const AttrNumber *selected, const AttrNumber *inserted);
extern void okno_rt_check(const OknoRangeTable *rt);
extern void okno_rt_init_estate(EState *estate, const OknoRangeTable *rt);
extern AttrNumber okno_attnum(Oid relid, const char *name);
extern bool okno_index_is(Relation index, Oid relid, int natts,
						  const AttrNumber *attnos);
extern void okno_push_statement_snapshot(Snapshot snapshot);
extern void okno_refuse_instead_rules(OknoRel rel, const char *what);

/* store.c */
typedef struct OknoStoredKey
{
	bool		found;
	int16		fingerprint_version;
	char		fingerprint[OKNO_FINGERPRINT_LEN + 1];
	Jsonb	   *response;		/* in the caller's memory context */
} OknoStoredKey;

extern void okno_lookup_key(int32 actor, text *key, Snapshot snapshot,
							MemoryContext resultcxt, OknoStoredKey *out);
extern Jsonb *okno_insert_sql(int32 actor, const OknoBookingIn *in, text *key,
							  const char *fingerprint, pg_uuid_t *event_id,
							  MemoryContext cxt);

/* insert.c */
extern void okno_insert_init(void);
extern bool okno_insert_direct(int32 actor, const OknoBookingIn *in, text *key,
							   const char *fingerprint, pg_uuid_t *event_id,
							   MemoryContext cxt, Jsonb **card);

/* outbox.c */
#define OKNO_EVENT_BOOKING_CREATED		"booking_created"
#define OKNO_EVENT_BOOKING_CANCELLED	"booking_cancelled"
#define OKNO_NOTIFY_CHANNEL				"okno_outbox"
extern void okno_store_event(pg_uuid_t *id, const char *kind, Jsonb *payload);
extern void okno_insert_event(const char *kind, Jsonb *payload);
extern void okno_notify(void);
extern void okno_new_event_id(pg_uuid_t *id);

/* wait.c */
extern void okno_wait_init(void);
extern void okno_wake_at_commit(void);

#endif							/* OKNO_H */
