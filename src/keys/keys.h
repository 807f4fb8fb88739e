/*-------------------------------------------------------------------------
 *
 * keys.h
 *	  The keys group: idempotency keys of any operation, the lock a key's
 *	  request holds, and what is left of a key once it has expired.
 *
 * Owns: the contract of a key, once for both stores of keys (the course's
 * idempotency for bookings, okno_key for operations): lock, look up, the
 * latest-snapshot check, compare, replay or key_reused, key_expired,
 * request_in_progress (contract.c); the rules of a key (bookings' too),
 * an operation's name and a scope, read from their arguments (key_args.c);
 * the lock of a request's key and the setting okno.key_wait, for bookings
 * and operations alike (key_lock.c); a key's identity and its hash, the
 * tombstones okno_purge leaves and the setting okno.key_tombstone_age
 * (tombstone.c); okno's table of operations' keys, okno_key: lookup and
 * store (key_table.c); the claims a transaction holds and the check at
 * its commit that each was stored (claim.c); the handler an operation
 * runs (handler.c); the SQL functions okno_idempotent,
 * okno_idempotent_result, okno_key_claim and okno_key_store
 * (idempotent.c); the RFC 8785 form of a JSON value and an operation's
 * request's fingerprint, okno_canonical_json (canonical_json.c).
 *
 * May call: base and pure only.  The booking group runs its key's
 * contract here over its own store; maintenance purges keys into
 * tombstones with the identity and age defined here.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_KEYS_H
#define OKNO_KEYS_H

#include "base/base.h"

/* the length of a SHA-256 digest: a fingerprint or a key's identity hash */
#define OKNO_HASH_LEN 32

/* okno's table of operations' keys, and its tombstones (not before 0.7.0) */
#define OKNO_KEY_TABLE			"okno_key"
#define OKNO_KEY_INDEX			"okno_key_pkey"
#define OKNO_TOMBSTONE_TABLE	"okno_key_tombstone"
#define OKNO_TOMBSTONE_INDEX	"okno_key_tombstone_pkey"

/*
 * Which key a request names: an operation's (operation, scope, key), or a
 * booking's (actor, key) when operation is NULL.  The strings are
 * NUL-terminated and checked against their rules.
 */
typedef struct OknoKeyRef
{
	const char *operation;		/* NULL: a booking's key */
	const char *scope;			/* an operation's scope */
	int32		actor;			/* a booking's actor */
	const char *key;
} OknoKeyRef;

/* init: the settings and the transaction callbacks */
extern void okno_keys_init(void);

/* key_args.c */
extern void okno_check_key(text *key);
extern const char *okno_operation_arg(FunctionCallInfo fcinfo, int argno);
extern const char *okno_scope_arg(FunctionCallInfo fcinfo, int argno);
extern const char *okno_key_arg(FunctionCallInfo fcinfo, int argno);
extern char *okno_key_owner(const OknoKeyRef *ref);

/* key_lock.c */
extern void okno_key_lock_init(void);
extern bool okno_key_wait(void);
extern void okno_lock_key(const OknoKeyRef *ref);
extern int64 okno_key_lock_hash(const OknoKeyRef *ref);

/* a try of a key's lock on the node of its shard (key_lock.c) */
typedef enum OknoShardLock
{
	OKNO_SHARD_LOCK_NONE,		/* Citus does not distribute the store */
	OKNO_SHARD_LOCK_TAKEN,		/* taken, to the end of the transaction */
	OKNO_SHARD_LOCK_HELD		/* another transaction holds it */
} OknoShardLock;

/*
 * A key as its store holds it: whether it was found, the stored request's
 * fingerprint in the store's own form (an operation's OKNO_HASH_LEN
 * bytes; a booking's hex text and the version of the form it was computed
 * in), and the response to replay, in the caller's memory context.
 */
typedef struct OknoStoredKey
{
	bool		found;
	int16		fingerprint_version;
	char		fingerprint[2 * OKNO_HASH_LEN + 1];
	Jsonb	   *response;
} OknoStoredKey;

/*
 * A store of keys, for the contract (contract.c): the course's idempotency
 * for bookings (booking/key_lookup.c), okno's okno_key for operations
 * (key_table.c).  request is the store's own form of the request, passed
 * through.
 */
typedef struct OknoKeyStore
{
	/*
	 * whether the caller may read (store: and store) the keys; with raise,
	 * 42501 unless it may
	 */
	bool		(*check_privileges) (bool store, bool raise);
	/* try ref's key's lock on its shard's node, where Citus has the store */
	OknoShardLock (*try_lock_on_shard) (const OknoKeyRef *ref);
	/* ref's key is claimed by this transaction, not stored (NULL: never) */
	bool		(*claimed) (const OknoKeyRef *ref);
	/* look ref's key up in snapshot (InvalidSnapshot: a new statement's) */
	void		(*lookup) (const OknoKeyRef *ref, const void *request,
						   Snapshot snapshot, MemoryContext cxt, OknoStoredKey *out);
	/* stored is request's key, compared in the form it was stored in */
	bool		(*same_request) (const OknoKeyRef *ref, const OknoStoredKey *stored,
								 const void *request);
} OknoKeyStore;

/* contract.c */
extern void okno_key_lock(const OknoKeyStore *store, const OknoKeyRef *ref);
extern Jsonb *okno_key_replay(const OknoKeyStore *store, const OknoKeyRef *ref,
							  const void *request, MemoryContext cxt);
extern Datum okno_key_result(FunctionCallInfo fcinfo, Jsonb *response, bool replayed);
extern bool okno_key_before_claim(const OknoKeyStore *store);
extern void okno_key_claimed_new(const OknoKeyRef *ref);
extern bool okno_key_claim_row(const OknoKeyRef *ref, SPIPlanPtr plan, Datum *values,
							   int expected);
extern OknoShardLock okno_key_try_lock_on_shard(const OknoKeyRef *ref, Oid relid, OknoPlan *plan,
												Datum *values, int lockarg);

/*
 * The hash of a key's identity in SQL (tombstone.c says what it is), for
 * okno_purge and okno_verify: a booking's key of actor and key, an
 * operation's of op, scope and key (SQL expressions of type text, or int4
 * for actor).
 */
#define OKNO_SQL_BOOKING_KEY_HASH(actor, key) \
	"pg_catalog.sha256(pg_catalog.convert_to(':' OPERATOR(pg_catalog.||) (" key ")::pg_catalog.text" \
	" OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) (" actor ")::pg_catalog.text, 'UTF8'))"
#define OKNO_SQL_OPERATION_KEY_HASH(op, scope, key) \
	"pg_catalog.sha256(pg_catalog.convert_to((" op ")::pg_catalog.text OPERATOR(pg_catalog.||) ':'" \
	" OPERATOR(pg_catalog.||) (" key ")::pg_catalog.text OPERATOR(pg_catalog.||) ':'" \
	" OPERATOR(pg_catalog.||) (" scope ")::pg_catalog.text, 'UTF8'))"

/* tombstone.c */
extern void okno_tombstone_init(void);
extern void okno_key_identity(const OknoKeyRef *ref, StringInfo out);
extern void okno_key_hash(const OknoKeyRef *ref, uint8 hash[OKNO_HASH_LEN]);
extern bool okno_key_expired(const OknoKeyRef *ref);
extern int	okno_key_tombstone_age(void);
extern void okno_check_expired(const OknoKeyRef *ref);

/* key_table.c: the operations' store (request: the fingerprint's bytes) */
extern const OknoKeyStore okno_operation_keys;
extern bool okno_op_key_claim_row(const OknoKeyRef *ref,
								  const uint8 fingerprint[OKNO_HASH_LEN]);
extern void okno_op_key_insert(const OknoKeyRef *ref,
							   const uint8 fingerprint[OKNO_HASH_LEN],
							   Jsonb *response);

/* claim.c */
extern void okno_keys_claim_init(void);
extern bool okno_claim_open(const OknoKeyRef *ref);
extern void okno_claim_add(const OknoKeyRef *ref, const uint8 fingerprint[OKNO_HASH_LEN],
						   bool handler);
extern const uint8 *okno_claim_fingerprint(const OknoKeyRef *ref, bool *handler);
extern void okno_claim_stored(const OknoKeyRef *ref);

/* handler.c */
extern void okno_handler_init(void);
extern void okno_handler_check(Oid handler);
extern Jsonb *okno_handler_call(Oid handler, Jsonb *request);

/* canonical_json.c */
extern void okno_canonical_json_text(Jsonb *value, StringInfo out);
extern void okno_request_fingerprint(Jsonb *request, uint8 fingerprint[OKNO_HASH_LEN]);

#endif							/* OKNO_KEYS_H */
