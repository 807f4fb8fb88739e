/*-------------------------------------------------------------------------
 *
 * booking.h
 *	  The booking group: a booking's steps, from the request to its rows.
 *
 * Owns: the payload's validation (payload.c); a request's fingerprint, the
 * SHA-256 of its form in either fingerprint version (fingerprint.c; the
 * form itself is written by pure/booking_form.c); the advisory locks of a
 * request and of a resource (lock.c); the booking card and event payload
 * (response.c); the stored key's lookup (key_lookup.c); writing
 * the booking, its key and its event, by statements (sql_write.c) or
 * without a plan (direct_tables.c decides whether the tables allow it and
 * keeps what it derived per backend, direct_xact.c keeps the executor
 * states per transaction, direct_write.c writes); and the SQL functions
 * that create (create.c), read and cancel (get_cancel.c) a booking.
 *
 * May call: the keys group (the key rule, the request lock and okno.key_wait,
 * the key's tombstone), the outbox group (to write the event and its
 * wake-up), base and pure.  Nothing here calls delivery or maintenance.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_BOOKING_H
#define OKNO_BOOKING_H

#include "base/base.h"
#include "keys/keys.h"

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

/* The fingerprint_version of okno's form (pure/booking_form.c). */
#define OKNO_FINGERPRINT_VERSION 1

/*
 * The fingerprint_version of keys the course's own service stored (before a
 * database was adopted, or beside okno): SHA-256 of pydantic 2's JSON of
 * the request, instants at the offsets the client sent
 * (okno_booking_form_write_course, pure/booking_form.c).
 */
#define OKNO_FINGERPRINT_COURSE 0

/* direct_xact.c: registers the per-transaction cache's callback */
extern void okno_booking_init(void);

/* payload.c */
extern void okno_parse_payload(Jsonb *payload, OknoBookingIn *out);

/* fingerprint.c */
extern bool okno_fingerprint_known(int version);
extern void okno_fingerprint_hex(const OknoBookingIn *in, int version,
								 char hex[OKNO_FINGERPRINT_LEN + 1]);

/* lock.c */
extern void okno_lock_resource(int32 resource_id);

/* response.c */
extern Jsonb *okno_booking_card(int64 id, int32 actor, const OknoBookingIn *in,
								const char *status);
extern Jsonb *okno_event_payload(int64 booking_id);

/*
 * key_lookup.c: bookings' store of keys, the course's idempotency, for
 * keys/contract.c; its request is an OknoBookingRequest
 */
typedef struct OknoBookingRequest
{
	text	   *key;
	const OknoBookingIn *in;
	const char *fingerprint;	/* in OKNO_FINGERPRINT_VERSION */
} OknoBookingRequest;

extern const OknoKeyStore okno_booking_keys;
extern const OknoDirectCols okno_idempotency_cols;

/*
 * sql_write.c: the booking, its key and its event, by statements; with
 * key_first (idempotency distributed by Citus) the key claimed first, NULL
 * when another request's committed key was there
 */
extern Jsonb *okno_insert_sql(const OknoKeyRef *ref, const OknoBookingIn *in,
							  text *key, const char *fingerprint,
							  pg_uuid_t *event_id, bool key_first,
							  MemoryContext cxt);

/* direct_write.c: the same without a plan, where the tables allow it */
extern bool okno_insert_direct(int32 actor, const OknoBookingIn *in, text *key,
							   const char *fingerprint, pg_uuid_t *event_id,
							   MemoryContext cxt, Jsonb **card);

/*
 * The direct write's parts (direct_tables.c, direct_xact.c and
 * direct_write.c only).
 */

/* The range table of the statement, in this order (range table indexes). */
#define OKNO_RT_BOOKINGS	1
#define OKNO_RT_IDEMPOTENCY	2
#define OKNO_RT_OUTBOX		3
#define OKNO_RT_ACTORS		4
#define OKNO_RT_RESOURCES	5
#define OKNO_RT_COUNT		5
#define OKNO_RT_WRITTEN		3	/* the first three are written */

/* The values the caller supplies, by column. */
typedef enum OknoInsertArg
{
	OKNO_ARG_BOOKING_RESOURCE,
	OKNO_ARG_BOOKING_ACTOR,
	OKNO_ARG_BOOKING_STARTS,
	OKNO_ARG_BOOKING_ENDS,
	OKNO_ARG_KEY_ACTOR,
	OKNO_ARG_KEY_KEY,
	OKNO_ARG_KEY_FINGERPRINT,
	OKNO_ARG_KEY_VERSION,
	OKNO_ARG_KEY_RESPONSE,
	OKNO_ARG_EVENT_ID,
	OKNO_ARG_EVENT_KIND,
	OKNO_ARG_EVENT_PAYLOAD,
	OKNO_NUM_ARGS
} OknoInsertArg;

/* a column that no OknoInsertArg supplies */
#define OKNO_NOT_SUPPLIED	(-1)

/*
 * What the direct path knows about the tables, derived under their locks
 * and derived again when the cache generation (schema.c) changes.
 */
typedef struct OknoDirectInfo
{
	uint64		generation;
	bool		usable;			/* the tables allow the direct path */
	MemoryContext cxt;
	AttrNumber	booking_id;		/* bookings.id, filled by its default */
	Oid			booking_id_type;	/* int8 or int4 */
	int			natts[OKNO_RT_WRITTEN];
	int		   *argof[OKNO_RT_WRITTEN]; /* per column, an OknoInsertArg or
										 * OKNO_NOT_SUPPLIED */
	OknoRangeTable rt;
} OknoDirectInfo;

/* What the rest of the transaction reuses, for the three tables. */
typedef struct OknoDirectXact
{
	uint64		generation;
	MemoryContext cxt;			/* under TopTransactionContext */
	EState	   *prep;			/* its es_query_cxt holds the states */
	ExprState **checks[OKNO_RT_WRITTEN];	/* as ExecRelCheck prepares them */
	OknoDirectIndexes indexes[OKNO_RT_WRITTEN];	/* IndexInfos, states prepared */
	ExprState **defaults[OKNO_RT_WRITTEN];	/* per column not supplied, or
											 * NULL */
} OknoDirectXact;

/* direct_tables.c */
extern const OknoDirectCols *const okno_direct_cols[OKNO_RT_COUNT];
extern const OknoDirectInfo *okno_direct_info(uint64 generation,
											  OknoDirectRel *const *r);

/* direct_xact.c */
extern const OknoDirectXact *okno_direct_xact(const OknoDirectInfo *info,
											  Relation *rels);

#endif							/* OKNO_BOOKING_H */
