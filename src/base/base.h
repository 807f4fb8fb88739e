/*-------------------------------------------------------------------------
 *
 * base.h
 *	  The bottom group: okno's schema and the binding to its tables, kept
 *	  plans and SPI, the superuser guard, relation access for the direct
 *	  paths, okno's errors, and Unix-time conversions.
 *
 * Owns: the per-backend cache of okno's schema, of the tables bound in it
 * (bind.c) and of every kept plan (schema.c, which registers the
 * invalidation callbacks that drop them); the domain errors, one helper
 * each (errors.c); running a superuser's call as the tables' owner
 * (owner.c); the range table, privilege check and snapshot a direct path
 * shares with the statement it replaces, and the errors about a row okno
 * could not write there (relation.c); the one direct access to a table,
 * okno's execReplication.c: the map of the relations it reads and writes,
 * a unique index's probe by key and a row's insert (direct.c); SHA-256
 * (digest.c); Unix microseconds (unixtime.c).
 *
 * May call: PostgreSQL and the pure helpers (src/pure) only.  Every other
 * group calls down into this one; nothing here calls up.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_BASE_H
#define OKNO_BASE_H

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

#include "compat.h"

/* The name of the subscriber that drains the outbox itself. */
#define OKNO_DEFAULT_SUBSCRIBER "default"

/*
 * A SPI plan whose text names okno's schema.  The text holds "%1$s" where
 * the quoted schema name goes; okno_plan() prepares it once per backend (and
 * again after the extension's objects change) and keeps it.  A plan that is
 * run very often and whose best shape does not depend on its parameters'
 * values (the drains') sets cursor_options to CURSOR_OPT_GENERIC_PLAN.
 */
/*
 * The forms a plan's text takes for what the database has (schema.c picks
 * one each time it looks okno's schema and tables up): okno's tables as
 * this version makes them; tables not yet prepared for order keys
 * (okno_prepare_tables() adds outbox.order_key); and an okno installed
 * before order keys, whose okno_delivery names its key column "booking".
 */
typedef enum OknoPlanForm
{
	OKNO_PLAN_CURRENT,
	OKNO_PLAN_UNPREPARED,
	OKNO_PLAN_NO_ORDER_KEYS,
	OKNO_NUM_PLAN_FORMS
} OknoPlanForm;

typedef struct OknoPlan
{
	const char *sql;			/* the text (%1$s: okno's schema) */
	const char *older[OKNO_NUM_PLAN_FORMS - 1];	/* the text in the older
												 * forms, [form - 1]; NULL:
												 * the next newer one's */
	int			nargs;
	Oid			argtypes[11];
	int			cursor_options; /* CURSOR_OPT_GENERIC_PLAN: see okno_plan() */
	bool		own;			/* names only okno's own relations: prepared
								 * without binding the application's tables,
								 * so it runs in a database that has none */
	SPIPlanPtr	plan;
	uint64		generation;
} OknoPlan;

/*
 * okno's relations whose OIDs schema.c caches: the application's five
 * tables that okno binds to (bind.c), then their primary keys' indexes that
 * okno scans directly
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

/* okno version major.minor.patch as a number (pg_extension.extversion) */
#define OKNO_V(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))

/* schema.c: okno's row of pg_extension, the schema, the binding and the kept plans */
typedef struct OknoExtension
{
	Oid			oid;
	Oid			nsp;
	Oid			owner;
	char		version[NAMEDATALEN];	/* "" if null */
} OknoExtension;

extern bool okno_read_extension(OknoExtension *ext);
extern void okno_base_init(void);
extern const char *okno_schema_name(void);
extern Oid	okno_relid(OknoRel rel);
extern Oid	okno_relid_by_name(const char *relname);
extern bool okno_application_tables_absent(void);
extern uint64 okno_cache_generation(void);
extern int	okno_installed_version(void);
extern int	okno_installed_version_uncached(void);
extern SPIPlanPtr okno_plan(OknoPlan *p);
extern void okno_spi_connect(void);
extern void okno_spi_finish(void);
extern void okno_check_spi(int rc, int expected, const char *what);

/* bind.c: the application's tables, found by name and checked */
typedef enum OknoCon
{
	OKNO_CON_KEY_UNIQUE,		/* idempotency's primary key */
	OKNO_CON_BOOKING_ACTOR,		/* bookings (actor_id) -> actors */
	OKNO_CON_BOOKING_RESOURCE,	/* bookings (resource_id) -> resources */
	OKNO_CON_KEY_ACTOR,			/* idempotency (actor_id) -> actors */
	OKNO_NUM_CONS
} OknoCon;

typedef struct OknoBinding
{
	Oid			relid[OKNO_NUM_TABLES];
	Oid			owner[OKNO_NUM_TABLES];
	Oid			pkey_index[OKNO_NUM_TABLES];
	/* the constraints' names ("" where the table has none) */
	char		con_names[OKNO_NUM_CONS][NAMEDATALEN];
	/* a deferrable trigger on a table okno writes, "table.trigger" or "" */
	char		deferred[2 * NAMEDATALEN + 2];
	/*
	 * okno is 0.7.0 or later and outbox has order_key; false until the
	 * owner prepares the tables for it, and they are served as before
	 * (OKNO_PLAN_UNPREPARED)
	 */
	bool		order_keys;
	/* Citus knows the table (citus.c): its rows are in the shards */
	bool		citus[OKNO_NUM_TABLES];
	/*
	 * Citus distributes outbox by its integer column bucket (README,
	 * "Scaling out with Citus"): okno writes each event's bucket
	 * (outbox/event_bucket.c) and drains a shard's buckets per statement
	 */
	bool		outbox_buckets;
	/*
	 * Citus keeps outbox in one shard on one node (a distributed schema's
	 * table, schema mode): okno drains it with the bucket drain's
	 * statements without the bucket restriction, and runs its other
	 * statements as on one server (Citus plans them onto that node)
	 */
	bool		outbox_one_shard;
} OknoBinding;

/*
 * A column of the application's tables, as okno checks, creates and adds
 * it: one spec for the binding (bind.c), okno_create_tables() and
 * okno_prepare_tables() (maintenance/).
 */
typedef struct OknoColumn
{
	OknoRel		table;
	const char *name;
	int			since;			/* the okno version that needs it (OKNO_V) */
	bool		optional;		/* okno does without it until the owner
								 * prepares the tables (a type it cannot use
								 * is a problem all the same) */
	Oid			types[3];		/* the types okno accepts (none: a column
								 * okno creates but does not bind) */
	int			min_len;		/* character types: at least this long,
								 * exactly for char(n) */
	const char *type_sql;		/* the type okno gives it */
	const char *create_sql;		/* its definition in okno_create_tables()
								 * (NULL: add_sql, else type_sql) */
	const char *add_sql;		/* okno_prepare_tables() adds it so where it
								 * is missing (a constant default or none:
								 * no rewrite); NULL: never added */
	const char *default_sql;	/* the default okno's inserts rely on, set
								 * where the column has none */
	bool		course;			/* okno 0.5.0's own tables had it: a table
								 * without it held rows written by others */
	const char *readers_of;		/* added: granted to the roles that may
								 * read these columns (", "-separated) */
} OknoColumn;

extern const char *const okno_table_names[OKNO_NUM_TABLES];
extern const OknoColumn okno_columns[];
extern const int okno_num_columns;
extern const char *okno_column_definition(const OknoColumn *col);
extern void okno_bind_tables(Oid nsp, const char *schema, int version,
							 OknoBinding *b);
extern void okno_check_preparable(Oid nsp, const char *schema, int version,
								  const char *fname);
extern bool okno_tables_absent(Oid nsp);
extern const OknoBinding *okno_binding(void);

/* owner.c: a superuser's call runs as the tables' owner */
typedef struct OknoGuard
{
	bool		switched;
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
} OknoGuard;

extern void okno_guard_init(void);
extern void okno_guard_begin(OknoGuard *guard);
extern void okno_guard_begin_owner(OknoGuard *guard, Oid owner);
extern void okno_guard_end(OknoGuard *guard);
extern int	okno_execute_as_owner(Oid relid, OknoPlan *plan, Datum *values, long count);
extern int	okno_execute_locking(Oid relid, OknoPlan *plan, Datum *values, long count);

/* relation.c: the range table of a statement that a direct path replaces */
typedef struct OknoRangeTable
{
	List	   *rtable;			/* RangeTblEntry */
	List	   *perminfos;		/* RTEPermissionInfo (PostgreSQL 16 and later) */
} OknoRangeTable;

extern void okno_rt_add(OknoRangeTable *rt, Oid relid, AclMode perms,
						const AttrNumber *selected, const AttrNumber *inserted);
extern bool okno_rt_check(const OknoRangeTable *rt, bool raise);
extern void okno_rt_init_estate(EState *estate, const OknoRangeTable *rt);
extern AttrNumber okno_attnum(Oid relid, const char *name);
extern bool okno_index_is(Relation index, Oid relid, int natts,
						  const AttrNumber *attnos);
extern void okno_push_statement_snapshot(Snapshot snapshot);
extern void okno_refuse_instead_rules(OknoRel rel, const char *what);
pg_noreturn extern void okno_error_not_stored(OknoRel rel, const char *what);
pg_noreturn extern void okno_error_instead_rule(OknoRel rel, const char *what);

/* citus.c: the tables Citus knows */
extern bool okno_citus_table(Oid relid);
extern bool okno_citus_reference(Oid relid);
extern bool okno_citus_distributed_schema(Oid nsp);
#define OKNO_OUTBOX_BUCKET_COLUMN "bucket"
extern void okno_outbox_layout(Oid relid, bool citus, bool *buckets, bool *one_shard);
pg_noreturn extern void okno_refuse_on_citus(const char *what);
extern bool okno_binding_citus(const OknoBinding *b);
extern void okno_require_outbox_buckets(const OknoBinding *b, const char *fname);
extern const char *okno_error_constraint(const ErrorData *edata, bool citus);

/*
 * direct.c: the relations okno reads or writes without a plan.  A caller
 * names the columns it reads or writes: the first nkeys of them the key of
 * the unique index it probes (keytypes: each key column's operator class
 * input type, the type of the values it probes with), the first nchecked
 * those the statement it replaces names (its privileges are checked on
 * them).
 */
#define OKNO_DIRECT_MAX_COLS 8
#define OKNO_DIRECT_MAX_KEYS 3

typedef struct OknoDirectCols
{
	int			ncols;
	int			nkeys;
	int			nchecked;
	const char *names[OKNO_DIRECT_MAX_COLS];
	Oid			keytypes[OKNO_DIRECT_MAX_KEYS];
} OknoDirectCols;

/* An entry of the relation map, derived again after the table changes. */
typedef struct OknoDirectRel
{
	Oid			relid;			/* the map's key */
	bool		valid;			/* false: derive again at the next use */
	const OknoDirectCols *cols; /* what it was derived for */
	AttrNumber	attnum[OKNO_DIRECT_MAX_COLS];	/* InvalidAttrNumber: missing */
	bool		all_columns;	/* every column cols names exists */
	MemoryContext cxt;			/* holds the range tables */
	OknoRangeTable read_rt;		/* SELECT of the checked columns */
	OknoRangeTable write_rt;	/* INSERT of the checked columns */
	bool		probe_valid;	/* false: derive the index's facts again */
	Oid			indexid;		/* the unique index probed, or InvalidOid */
	bool		probe_fits;		/* the index can be probed by the key */
	RegProcedure eqproc[OKNO_DIRECT_MAX_KEYS];	/* each key column's equality */
	Oid			collation[OKNO_DIRECT_MAX_KEYS];
	bool		citus;			/* Citus knows the table: a shell (citus.c) */
	Relation	rel;			/* open between okno_direct_open and _close */
	Relation	index;
} OknoDirectRel;

extern void okno_direct_init(void);
extern OknoDirectRel *okno_direct_rel(Oid relid, const OknoDirectCols *cols);
extern OknoDirectRel *okno_direct_open(Oid relid, const OknoDirectCols *cols,
									   LOCKMODE lockmode);
extern bool okno_direct_open_index(OknoDirectRel *r, Oid indexid);
extern void okno_direct_close(OknoDirectRel *r);
extern bool okno_direct_plain(const OknoDirectRel *r);
extern bool okno_direct_probe(const OknoDirectRel *r, const Datum *values,
							  Snapshot snapshot, TupleTableSlot *slot);

/*
 * A table's indexes as ExecOpenIndices finds them, their IndexInfo built
 * once, with its expression and predicate states prepared, for a caller
 * that writes the table many times in a transaction (they hold no
 * resources and point into no relcache entry).
 */
typedef struct OknoDirectIndexes
{
	int			n;
	Oid		   *oids;			/* as RelationGetIndexList lists them */
	IndexInfo **infos;
} OknoDirectIndexes;

extern EState *okno_direct_begin(const OknoRangeTable *rt);
extern void okno_direct_prepare_indexes(Relation rel, EState *prep,
										OknoDirectIndexes *ix);
extern ResultRelInfo *okno_direct_result_rel(EState *estate, Index rti,
											 const OknoDirectIndexes *ix);
extern TupleTableSlot *okno_direct_row(EState *estate, ResultRelInfo *rri);
extern void okno_direct_insert(EState *estate, ResultRelInfo *rri,
							   TupleTableSlot *slot);
extern void okno_direct_end(EState *estate);

/*
 * okno's advisory lock tags: classid "okno" in ASCII, objsubid 3 (a
 * resource's lock, booking/lock.c) or 4 (okno_wait's tags, outbox/wake.c);
 * objsubid 5 with a hash in classid and objid (an operation's key,
 * keys/key_lock.c), objsubid 6 likewise (an order key's turn,
 * outbox/emit.c).  Advisory locks taken by SQL functions have objsubid 1
 * or 2, so no SQL caller can take or block these.
 */
#define OKNO_LOCK_CLASS				0x6F6B6E6FU
#define OKNO_LOCK_SUBID_RESOURCE	3
#define OKNO_LOCK_SUBID_WAIT		4
#define OKNO_LOCK_SUBID_OPERATION	5
#define OKNO_LOCK_SUBID_ORDER		6

/*
 * The order of event ids, in SQL: id a comes before id b (ids of one
 * booking's events) by id order, except that an id that is not a UUID
 * version 7 (the course's events, adopted) comes before every version 7
 * id.  The delivery rules (delivery.h) and the views' counts
 * (maintenance/counts.c) use it.
 */
#define OKNO_SQL_V7(id) \
	"(pg_catalog.get_byte(pg_catalog.uuid_send(" id "), 6) OPERATOR(pg_catalog./) 16" \
	" OPERATOR(pg_catalog.=) 7)"
/*
 * A text that differs between the plan forms is written once, as a macro
 * M(F) that spells each word that differs as F##_WORD; OKNO_PLAN_FORMS(M)
 * gives a plan its text in every form.  The words are the order keys'
 * (outbox/outbox.h).
 */
#define OKNO_PLAN_FORMS(M) \
	.sql = M(OKNO_F_CURRENT), \
	.older = {M(OKNO_F_UNPREPARED), M(OKNO_F_NO_ORDER_KEYS)}


/* event id a comes before event id b (ids of one booking's events) */
#define OKNO_SQL_EARLIER(a, b) \
	" CASE WHEN " OKNO_SQL_V7(a) " OPERATOR(pg_catalog.=) " OKNO_SQL_V7(b) \
	"      THEN " a " OPERATOR(pg_catalog.<) " b \
	"      ELSE " OKNO_SQL_V7(b) " END"
/* digest.c: SHA-256 */
#define OKNO_SHA256_LEN 32
extern void okno_sha256(const void *data, size_t len, uint8 digest[OKNO_SHA256_LEN]);

/* unixtime.c */
extern TimestampTz okno_unix_us_to_timestamptz(int64 unix_us);
extern int64 okno_timestamptz_to_unix_us(TimestampTz ts);
extern int64 okno_now_unix_us(void);

/* errors.c: okno's SQLSTATEs and one helper per domain error */
#define ERRCODE_OKNO_INVALID_KEY		MAKE_SQLSTATE('O','K','B','0','1')
#define ERRCODE_OKNO_INVALID_PAYLOAD	MAKE_SQLSTATE('O','K','B','0','2')
#define ERRCODE_OKNO_RESOURCE_MISSING	MAKE_SQLSTATE('O','K','B','0','3')
#define ERRCODE_OKNO_KEY_REUSED			MAKE_SQLSTATE('O','K','B','0','4')
#define ERRCODE_OKNO_SLOT_BUSY			MAKE_SQLSTATE('O','K','B','0','5')
#define ERRCODE_OKNO_ACTOR_MISSING		MAKE_SQLSTATE('O','K','B','0','6')
#define ERRCODE_OKNO_BOOKING_MISSING	MAKE_SQLSTATE('O','K','B','0','7')
#define ERRCODE_OKNO_EVENT_MISSING		MAKE_SQLSTATE('O','K','B','0','8')
#define ERRCODE_OKNO_SUBSCRIBER_MISSING	MAKE_SQLSTATE('O','K','B','0','9')
#define ERRCODE_OKNO_TABLES_UNFIT		MAKE_SQLSTATE('O','K','B','1','0')
#define ERRCODE_OKNO_KEY_EXPIRED		MAKE_SQLSTATE('O','K','B','1','1')
#define ERRCODE_OKNO_REQUEST_IN_PROGRESS	MAKE_SQLSTATE('O','K','B','1','2')

#define OKNO_OVERLAP_CONSTRAINT "bookings_no_overlap"

extern void okno_require_arg(FunctionCallInfo fcinfo, int argno, const char *name,
							 int sqlerrcode, const char *hint_fmt,...)
			pg_attribute_printf(5, 6);
pg_noreturn extern void okno_error_invalid_key(const char *detail);
pg_noreturn extern void okno_error_invalid_payload(const char *detail);
pg_noreturn extern void okno_error_resource_missing(int32 resource_id);
pg_noreturn extern void okno_error_key_reused(const char *owner, const char *key);
pg_noreturn extern void okno_error_slot_busy(int32 resource_id, const char *schema);
pg_noreturn extern void okno_error_actor_missing(int32 actor, bool isnull);
pg_noreturn extern void okno_error_booking_missing(int64 booking_id, bool isnull);
pg_noreturn extern void okno_error_event_missing(const char *event_id);
pg_noreturn extern void okno_error_subscriber_missing(const char *name);
pg_noreturn extern void okno_error_concurrent_request(const char *owner, const char *key);
pg_noreturn extern void okno_error_key_expired(const char *owner, const char *key);
pg_noreturn extern void okno_error_request_in_progress(const char *owner, const char *key,
													   bool mine);
pg_noreturn extern void okno_error_tables_unfit(const char *schema, const char *detail,
												bool missing, const char *fname);

#endif							/* OKNO_BASE_H */
