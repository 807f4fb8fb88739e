/*-------------------------------------------------------------------------
 *
 * direct_tables.c
 *	  Whether the tables allow the direct write (direct_write.c), and what
 *	  it derived from them, kept per backend.
 *
 * The direct path is used only where it is the statements' equal by
 * construction; direct_supported() lists what that takes.  What it derives
 * (the columns okno supplies and where, the range table and its
 * privileges, the booking id's column) is kept in a context under
 * TopMemoryContext and derived again when the cache generation (schema.c)
 * changes: after any change to one of the tables.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "base/base.h"
#include "booking/booking.h"

/*
 * The columns of the statement's tables that the direct write names, in
 * the relation map (base/direct.c): idempotency's are the key lookup's
 * (key_lookup.c); bookings.id is the one the statement returns, actors.id
 * and resources.id the keys probed.
 */
static const OknoDirectCols bookings_cols = {
	.ncols = 5, .names = {"resource_id", "actor_id", "starts_at", "ends_at", "id"}
};
#define BOOKINGS_ID 4
static const OknoDirectCols outbox_cols = {
	.ncols = 3, .names = {"id", "kind", "payload"}
};
static const OknoDirectCols id_cols = {
	.ncols = 1, .nkeys = 1, .names = {"id"}, .keytypes = {INT4OID}
};

/* the columns of the table at each rti (range table index - 1) */
const OknoDirectCols *const okno_direct_cols[OKNO_RT_COUNT] = {
	&bookings_cols, &okno_idempotency_cols, &outbox_cols, &id_cols, &id_cols
};

typedef struct SuppliedColumn
{
	int			rti;
	int			col;			/* in okno_direct_cols[rti - 1] */
	Oid			typid;			/* TEXTOID: a string column, see strlen */
	int			strlen;			/* a string's longest value */
} SuppliedColumn;

/*
 * In the order of OknoInsertArg.  A string column may be text, or varchar long
 * enough for any value okno writes (the install script's varchar(80) and
 * varchar(40); a course table's text); the fingerprint also char(64), which
 * its 64 characters fill.  okno supplies each as a text datum, which is
 * what the statement would store in any of them.
 */
static const SuppliedColumn supplied[OKNO_NUM_ARGS] = {
	{OKNO_RT_BOOKINGS, 0, INT4OID, 0},	/* resource_id */
	{OKNO_RT_BOOKINGS, 1, INT4OID, 0},	/* actor_id */
	{OKNO_RT_BOOKINGS, 2, TIMESTAMPTZOID, 0},	/* starts_at */
	{OKNO_RT_BOOKINGS, 3, TIMESTAMPTZOID, 0},	/* ends_at */
	{OKNO_RT_IDEMPOTENCY, 0, INT4OID, 0},	/* actor_id */
	{OKNO_RT_IDEMPOTENCY, 1, TEXTOID, 80},	/* request_key */
	{OKNO_RT_IDEMPOTENCY, 2, TEXTOID, OKNO_FINGERPRINT_LEN},	/* fingerprint */
	{OKNO_RT_IDEMPOTENCY, 3, INT2OID, 0},	/* fingerprint_version */
	{OKNO_RT_IDEMPOTENCY, 4, JSONBOID, 0},	/* response_body */
	{OKNO_RT_OUTBOX, 0, UUIDOID, 0},	/* id */
	{OKNO_RT_OUTBOX, 1, TEXTOID, 17},	/* kind: booking_cancelled */
	{OKNO_RT_OUTBOX, 2, JSONBOID, 0},	/* payload */
};

static OknoDirectInfo info = {0};

/*
 * Whether every trigger of a table the statement writes is a foreign key's
 * (those fire here exactly as for the statement).
 */
static bool
only_foreign_key_triggers(Relation rel)
{
	TriggerDesc *trigdesc = rel->trigdesc;
	int			i;

	if (trigdesc == NULL)
		return true;
	for (i = 0; i < trigdesc->numtriggers; i++)
	{
		Trigger    *t = &trigdesc->triggers[i];

		if (!t->tgisinternal || RI_FKey_trigger_type(t->tgfoid) == RI_TRIGGER_NONE)
			return false;
	}
	return true;
}

/*
 * Whether the column stores what okno supplies for it as it is.
 */
static bool
type_fits(Form_pg_attribute att, const SuppliedColumn *col)
{
	if (col->typid != TEXTOID)
		return att->atttypid == col->typid && att->atttypmod == -1;
	switch (att->atttypid)
	{
		case TEXTOID:
			return true;
		case VARCHAROID:
			return att->atttypmod == -1 || att->atttypmod - VARHDRSZ >= col->strlen;
		case BPCHAROID:
			return col->strlen == OKNO_FINGERPRINT_LEN &&
				att->atttypmod - VARHDRSZ == OKNO_FINGERPRINT_LEN;
		default:
			return false;
	}
}

/*
 * Map the columns of a table the statement writes to the supplied values;
 * false if a supplied column is missing or not of the type okno gives it.
 */
static bool
map_columns(int rti, const OknoDirectRel *r)
{
	TupleDesc	desc = RelationGetDescr(r->rel);
	int		   *argof = palloc(sizeof(int) * desc->natts);
	int			a;
	int			i;

	info.argof[rti - 1] = argof;
	info.natts[rti - 1] = desc->natts;
	for (i = 0; i < desc->natts; i++)
		argof[i] = OKNO_NOT_SUPPLIED;

	for (a = 0; a < OKNO_NUM_ARGS; a++)
	{
		AttrNumber	attno;
		Form_pg_attribute att;

		if (supplied[a].rti != rti)
			continue;
		attno = r->attnum[supplied[a].col];
		if (attno == InvalidAttrNumber)
			return false;
		att = TupleDescAttr(desc, attno - 1);
		if (att->attgenerated != '\0' || !type_fits(att, &supplied[a]))
			return false;
		argof[attno - 1] = a;
	}
	return true;
}

/*
 * What the direct path supports, positively: true only if writing the rows
 * here does what the statements of sql_write.c would do.  The tables are
 * open and locked.
 *
 *   - all five tables are plain tables (not partitions, views, foreign
 *     tables), without row-level security;
 *   - the three written have no rules, and no triggers but a foreign key's;
 *   - every column okno supplies exists, is not generated, and stores the
 *     value as it is (its type: the install script's, or for a string text
 *     or a varchar long enough; type_fits());
 *   - bookings.id is left to its default, and is bigint or integer;
 *   - actors and resources have their one-column integer primary keys on
 *     id (probed for actor_missing and resource_missing).
 *
 * Every other column gets what the statement would give it: its default,
 * or a NULL coerced to its type (a domain's constraints apply), or, if
 * generated, its generation expression.
 */
static bool
direct_supported(OknoDirectRel *const *r)
{
	AttrNumber	checked[OKNO_DIRECT_MAX_COLS + 1];
	AttrNumber	sel[2];
	Form_pg_attribute idatt;
	int			rti;
	int			i;

	for (rti = 1; rti <= OKNO_RT_COUNT; rti++)
	{
		Relation	rel = r[rti - 1]->rel;

		if (!okno_direct_plain(r[rti - 1]))
			return false;
		if (rti <= OKNO_RT_WRITTEN &&
			(rel->rd_rules != NULL || !only_foreign_key_triggers(rel) ||
			 !map_columns(rti, r[rti - 1])))
			return false;
	}

	info.booking_id = r[OKNO_RT_BOOKINGS - 1]->attnum[BOOKINGS_ID];
	if (info.booking_id == InvalidAttrNumber)
		return false;
	idatt = TupleDescAttr(RelationGetDescr(r[OKNO_RT_BOOKINGS - 1]->rel), info.booking_id - 1);
	if (idatt->attgenerated != '\0' ||
		(!idatt->atthasdef && idatt->attidentity == '\0') ||
		(idatt->atttypid != INT8OID && idatt->atttypid != INT4OID))
		return false;
	info.booking_id_type = idatt->atttypid;

	/* actors.id and resources.id: one-column integer primary keys */
	if (!r[OKNO_RT_ACTORS - 1]->probe_fits || !r[OKNO_RT_RESOURCES - 1]->probe_fits)
		return false;

	/*
	 * The range table of the statement, with its privileges: it inserts
	 * the supplied columns of the three tables and reads bookings.id (its
	 * RETURNING), the key's response_body (its ON CONFLICT's) and the
	 * referenced ids
	 */
	for (rti = 1; rti <= OKNO_RT_COUNT; rti++)
	{
		const OknoDirectRel *t = r[rti - 1];
		int			n = 0;

		sel[0] = sel[1] = InvalidAttrNumber;
		for (i = 0; i < OKNO_NUM_ARGS; i++)
			if (supplied[i].rti == rti)
				checked[n++] = t->attnum[supplied[i].col];
		checked[n] = InvalidAttrNumber;
		switch (rti)
		{
			case OKNO_RT_BOOKINGS:
				sel[0] = info.booking_id;
				okno_rt_add(&info.rt, t->relid, ACL_INSERT | ACL_SELECT, sel, checked);
				break;
			case OKNO_RT_IDEMPOTENCY:
				sel[0] = t->attnum[4];	/* response_body */
				okno_rt_add(&info.rt, t->relid, ACL_INSERT | ACL_SELECT, sel, checked);
				break;
			case OKNO_RT_OUTBOX:
				okno_rt_add(&info.rt, t->relid, ACL_INSERT, NULL, checked);
				break;
			default:
				sel[0] = t->attnum[0];	/* id */
				okno_rt_add(&info.rt, t->relid, ACL_SELECT, sel, NULL);
				break;
		}
	}
	return true;
}

/*
 * Derive info for this generation; the tables are open and locked, the
 * keys of actors and resources open.
 */
static void
prepare_info(uint64 generation, OknoDirectRel *const *r)
{
	MemoryContext oldcxt;

	if (info.cxt == NULL)
		info.cxt = AllocSetContextCreate(TopMemoryContext, "okno direct insert",
										 ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(info.cxt);
	memset(info.argof, 0, sizeof(info.argof));
	info.rt.rtable = NIL;
	info.rt.perminfos = NIL;
	info.generation = generation;

	oldcxt = MemoryContextSwitchTo(info.cxt);
	info.usable = direct_supported(r);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * What the direct path knows about the tables of this cache generation,
 * derived now if it is not known yet; the tables are open and locked, the
 * keys of actors and resources open.
 */
const OknoDirectInfo *
okno_direct_info(uint64 generation, OknoDirectRel *const *r)
{
	if (info.generation != generation || info.cxt == NULL)
		prepare_info(generation, r);
	return &info;
}
