/*-------------------------------------------------------------------------
 *
 * direct_write.c
 *	  The booking, its key and its event, written without a plan.
 *
 * The statements of sql_write.c cost an executor start-up and shut-down
 * each.  This file writes the three rows the way logical replication's
 * apply worker applies an INSERT, through okno's direct access
 * (base/direct.c): an executor state with the three tables as result
 * relations and their indexes opened (ExecOpenIndices); every column the
 * statement would leave out filled as the planner fills it, with its
 * default (build_column_default, planned and evaluated as worker.c does)
 * or else a NULL coerced to the column's type, domains included; and each
 * row stored with ExecSimpleRelationInsert (generated columns,
 * constraints, the row, its index entries with their unique and exclusion
 * checks, the AFTER row triggers), between AfterTriggerBeginQuery and
 * AfterTriggerEndQuery, so that the foreign-key checks run as they do at
 * the end of a statement.
 *
 * What the statement does around that is kept:
 *   - its relation locks, and its privilege check (okno_rt_check on the
 *     range table the statement would have, before anything else);
 *   - its snapshot: a CommandCounterIncrement and the snapshot of a
 *     non-read-only SPI statement, under which the actor and then the
 *     resource must exist (direct probes of their primary keys) before
 *     anything is inserted, so actor_missing and resource_missing still
 *     come before slot_busy and no default (a sequence) is evaluated in
 *     vain;
 *   - the order: booking, key, event, then the AFTER triggers.
 *
 * The direct path is used only where it is the statements' equal by
 * construction; direct_supported() (direct_tables.c) lists what that
 * takes, and anything else (a rule, a trigger that is not a foreign key's,
 * row-level security, a column of another type than okno gives it, a table
 * that is not a plain table ...) goes to the statements.
 *
 * The executor states this needs (the tables' prepared CHECK expressions,
 * their indexes' IndexInfos with expression and predicate states, column
 * defaults) are prepared by a transaction's first call and kept to its end
 * (direct_xact.c); each call opens the indexes with them instead of
 * building them again (okno_direct_result_rel).
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "base/base.h"
#include "booking/booking.h"
#include "outbox/outbox.h"

/*
 * A result relation for the table at rti, its indexes opened as the
 * executor opens them, with the transaction's prepared states.
 */
static ResultRelInfo *
open_result_rel(EState *estate, const OknoDirectXact *xc, int rti)
{
	ResultRelInfo *rri = okno_direct_result_rel(estate, rti, &xc->indexes[rti - 1]);

	if (xc->checks[rti - 1] != NULL)
		OKNO_RRI_CHECK_EXPRS(rri) = xc->checks[rti - 1];
	return rri;
}

/*
 * Fill a slot for the table at rti, supplied values from args and every
 * other column as the statement would, and store the row.
 */
static TupleTableSlot *
insert_row(EState *estate, const OknoDirectInfo *info, const OknoDirectXact *xc,
		   ResultRelInfo *rri, int rti, const Datum *args)
{
	int			t = rti - 1;
	TupleTableSlot *slot;
	ExprContext *econtext = GetPerTupleExprContext(estate);
	int			i;

	slot = okno_direct_row(estate, rri);
	for (i = 0; i < info->natts[t]; i++)
	{
		int			arg = info->argof[t][i];

		if (arg != OKNO_NOT_SUPPLIED)
		{
			slot->tts_values[i] = args[arg];
			slot->tts_isnull[i] = false;
		}
		else if (xc->defaults[t][i] != NULL)
			slot->tts_values[i] = ExecEvalExpr(xc->defaults[t][i], econtext,
											   &slot->tts_isnull[i]);
	}
	okno_direct_insert(estate, rri, slot);
	return slot;
}

/*
 * Lock the tables as the statement's plan would, and open them and the
 * keys of actors and resources; false, having only locked, if they
 * changed since the cache generation was read (the statements know
 * better) or one is missing.
 */
static bool
open_tables(uint64 generation, OknoDirectRel **r)
{
	static const LOCKMODE lockmodes[OKNO_RT_COUNT] = {
		RowExclusiveLock, RowExclusiveLock, RowExclusiveLock,
		AccessShareLock, AccessShareLock
	};
	static const OknoRel rels_of[OKNO_RT_COUNT] = {
		OKNO_REL_BOOKINGS, OKNO_REL_IDEMPOTENCY, OKNO_REL_OUTBOX,
		OKNO_REL_ACTORS, OKNO_REL_RESOURCES
	};
	Oid			relids[OKNO_RT_COUNT];
	Oid			actors_pkey = okno_relid(OKNO_REL_ACTORS_PKEY);
	Oid			resources_pkey = okno_relid(OKNO_REL_RESOURCES_PKEY);
	int			i;

	for (i = 0; i < OKNO_RT_COUNT; i++)
	{
		relids[i] = okno_relid(rels_of[i]);
		if (!OidIsValid(relids[i]))
			return false;
	}
	if (!OidIsValid(actors_pkey) || !OidIsValid(resources_pkey))
		return false;

	/* the statement's locks, taken as its plan takes them */
	for (i = 0; i < OKNO_RT_COUNT; i++)
		LockRelationOid(relids[i], lockmodes[i]);
	/* the tables changed before we locked them: the statements know better */
	if (okno_cache_generation() != generation)
		return false;

	for (i = 0; i < OKNO_RT_COUNT; i++)
		r[i] = okno_direct_open(relids[i], okno_direct_cols[i], NoLock);
	(void) okno_direct_open_index(r[OKNO_RT_ACTORS - 1], actors_pkey);
	(void) okno_direct_open_index(r[OKNO_RT_RESOURCES - 1], resources_pkey);
	return true;
}

/* close what open_tables opened; the locks stay until the transaction ends */
static void
close_tables(OknoDirectRel **r)
{
	int			i;

	for (i = OKNO_RT_COUNT - 1; i >= 0; i--)
		okno_direct_close(r[i]);
}

/*
 * Store the booking, its key and its event under the active snapshot, then
 * run the AFTER triggers (the foreign-key checks) as at the end of the
 * statement; returns the card, in the current memory context.
 */
static Jsonb *
write_rows(const OknoDirectInfo *info, const OknoDirectXact *xc, int32 actor,
		   const OknoBookingIn *in, text *key, const char *fingerprint,
		   pg_uuid_t *event_id)
{
	EState	   *estate;
	ResultRelInfo *rri[OKNO_RT_WRITTEN];
	TupleTableSlot *slot;
	Datum		args[OKNO_NUM_ARGS];
	Datum		id;
	bool		isnull;
	int64		booking_id;
	Jsonb	   *card;
	int			i;

	estate = okno_direct_begin(&info->rt);
	AfterTriggerBeginQuery();

	for (i = 0; i < OKNO_RT_WRITTEN; i++)
		rri[i] = open_result_rel(estate, xc, i + 1);

	args[OKNO_ARG_BOOKING_RESOURCE] = Int32GetDatum(in->resource_id);
	args[OKNO_ARG_BOOKING_ACTOR] = Int32GetDatum(actor);
	args[OKNO_ARG_BOOKING_STARTS] = TimestampTzGetDatum(okno_unix_us_to_timestamptz(in->starts_us));
	args[OKNO_ARG_BOOKING_ENDS] = TimestampTzGetDatum(okno_unix_us_to_timestamptz(in->ends_us));
	slot = insert_row(estate, info, xc, rri[OKNO_RT_BOOKINGS - 1], OKNO_RT_BOOKINGS, args);
	id = slot_getattr(slot, info->booking_id, &isnull);
	if (isnull)
		elog(ERROR, "booking stored without an id");
	booking_id = info->booking_id_type == INT8OID ? DatumGetInt64(id) : DatumGetInt32(id);

	card = okno_booking_card(booking_id, actor, in, "confirmed");
	args[OKNO_ARG_KEY_ACTOR] = Int32GetDatum(actor);
	args[OKNO_ARG_KEY_KEY] = PointerGetDatum(key);
	args[OKNO_ARG_KEY_FINGERPRINT] = PointerGetDatum(cstring_to_text(fingerprint));
	args[OKNO_ARG_KEY_VERSION] = Int16GetDatum(OKNO_FINGERPRINT_VERSION);
	args[OKNO_ARG_KEY_RESPONSE] = JsonbPGetDatum(card);
	(void) insert_row(estate, info, xc, rri[OKNO_RT_IDEMPOTENCY - 1], OKNO_RT_IDEMPOTENCY, args);

	args[OKNO_ARG_EVENT_ID] = UUIDPGetDatum(event_id);
	args[OKNO_ARG_EVENT_KIND] = PointerGetDatum(cstring_to_text(OKNO_EVENT_BOOKING_CREATED));
	args[OKNO_ARG_EVENT_PAYLOAD] = JsonbPGetDatum(okno_event_payload(booking_id));
	(void) insert_row(estate, info, xc, rri[OKNO_RT_OUTBOX - 1], OKNO_RT_OUTBOX, args);

	/* the foreign-key checks, as at the end of the statement */
	AfterTriggerEndQuery(estate);

	okno_direct_end(estate);
	return card;
}

/*
 * Insert the booking, its key and its event; return the card (allocated
 * in cxt) through *card.  Returns false, having done nothing but take
 * locks, if the statements must do it instead.
 */
bool
okno_insert_direct(int32 actor, const OknoBookingIn *in, text *key,
				   const char *fingerprint, pg_uuid_t *event_id,
				   MemoryContext cxt, Jsonb **card)
{
	uint64		generation = okno_cache_generation();
	OknoDirectRel *r[OKNO_RT_COUNT];
	Relation	rels[OKNO_RT_COUNT];
	const OknoDirectInfo *info;
	const OknoDirectXact *xc;
	Datum		id;
	Jsonb	   *result;
	int			i;

	if (!open_tables(generation, r))
		return false;
	info = okno_direct_info(generation, r);
	if (!info->usable)
	{
		close_tables(r);
		return false;
	}
	for (i = 0; i < OKNO_RT_COUNT; i++)
		rels[i] = r[i]->rel;
	xc = okno_direct_xact(info, rels);

	/* the executor's privilege check, before anything else */
	(void) okno_rt_check(&info->rt, true);

	/* the statement's snapshot, and its output command id */
	okno_push_statement_snapshot(InvalidSnapshot);

	/* the actor, then the resource, must exist */
	id = Int32GetDatum(actor);
	if (!okno_direct_probe(r[OKNO_RT_ACTORS - 1], &id, GetActiveSnapshot(), NULL))
		okno_error_actor_missing(actor, false);
	id = Int32GetDatum(in->resource_id);
	if (!okno_direct_probe(r[OKNO_RT_RESOURCES - 1], &id, GetActiveSnapshot(), NULL))
		okno_error_resource_missing(in->resource_id);
	close_tables(r);

	result = write_rows(info, xc, actor, in, key, fingerprint, event_id);
	PopActiveSnapshot();

	/* what follows in this statement sees the new rows */
	CommandCounterIncrement();

	*card = (Jsonb *) MemoryContextAlloc(cxt, VARSIZE(result));
	memcpy(*card, result, VARSIZE(result));
	return true;
}
