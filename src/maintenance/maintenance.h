/*-------------------------------------------------------------------------
 *
 * maintenance.h
 *	  The maintenance group: SQL functions beside the data's path, which
 *	  nothing else in okno calls.
 *
 * Owns: creating and preparing the application's tables (tables.c),
 * the event trigger that keeps the tables an older okno adopted when okno
 * is dropped (adopt.c), retention (purge.c), the consistency
 * check (verify.c) and the outbox's counts for the views (counts.c).
 *
 * May call: keys (a key's identity and okno.key_tombstone_age), outbox
 * (an event's order key, for outbox's index and the views' counts), base
 * and pure; it reads the tables itself rather than through the booking or
 * delivery groups.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_MAINTENANCE_H
#define OKNO_MAINTENANCE_H

#include "base/base.h"

/*
 * prepare.c: what okno needs of the application's existing tables.  What a
 * call did, one line each, for its result (in cxt, the caller's memory
 * context, which outlives SPI's); or, for okno_verify, what
 * okno_prepare_tables() would do (dry_run: nothing is changed).
 */
typedef struct OknoChanges
{
	MemoryContext cxt;
	List	   *lines;
	bool		course_rows;	/* a table lacked what okno's tables have */
	bool		dry_run;
} OknoChanges;

extern void okno_changed(OknoChanges *ch, const char *done, const char *todo);
extern void okno_run_ddl(OknoChanges *ch, const char *sql);
extern void okno_check_may_record(Oid nsp, const char *schema);
extern void okno_prepare_all(OknoChanges *ch, Oid nsp, const char *schema);
extern List *okno_tables_unprepared(void);

/*
 * purge_walk.c: okno_purge's keyset walk
 *
 * A table purged in keyset batches: each step finds the key of the row
 * 10,000 rows on from the last one (boundary: $1 .. $nkeys the last key,
 * then the offset, then for a one-column key the walk's own arguments)
 * and runs batch on the rows after the last key up to that one; when there is none, rest on the rows after the last
 * key.  Both take the last key ($1 ..), the boundary's ($nkeys + 1 ..,
 * NULL for rest) and then the walk's own arguments; they are DELETEs, or
 * (counts) statements that return how many rows they deleted.
 */
typedef struct OknoClusterKeys OknoClusterKeys;

typedef struct OknoPurgeWalk
{
	const char *what;			/* for can't-happen errors */
	int			nkeys;			/* columns of the primary key, at most 3 */
	OknoPlan   *boundary;
	OknoPlan   *batch;
	OknoPlan   *rest;
	bool		counts;
	const OknoClusterKeys *cluster; /* a table of keys on a Citus cluster:
									 * each batch by purge_cluster.c, not
									 * batch or rest */
} OknoPurgeWalk;

#define OKNO_PURGE_WALK_MAXKEYS	3
#define OKNO_PURGE_WALK_MAXARGS	3

extern uint64 okno_purge_walk(const OknoPurgeWalk *w, const Datum *start, const Datum *extra,
							  int nextra);

/*
 * purge_cluster.c: okno_purge's keys on a Citus cluster, a key forgotten
 * in two purges; the statements of a batch of each table of keys
 */
extern const OknoClusterKeys okno_cluster_booking_keys;
extern const OknoClusterKeys okno_cluster_operation_keys;
extern uint64 okno_purge_cluster_batch(const OknoClusterKeys *keys, Datum *args, char *nulls,
									   const char *what);
extern void okno_purge_cluster_check(bool app_tables, bool tombstones);
extern bool okno_purge_cluster_may_settle(bool stones_citus);
extern void okno_purge_cluster_note_marked(void);

#endif							/* OKNO_MAINTENANCE_H */
