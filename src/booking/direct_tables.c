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

#include "access/genam.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "parser/parse_coerce.h"
#include "rewrite/rewriteHandler.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "base/base.h"
#include "booking/booking.h"
#include "outbox/outbox.h"

typedef struct SuppliedColumn
{
	int			rti;
	const char *name;
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
	{OKNO_RT_BOOKINGS, "resource_id", INT4OID, 0},
	{OKNO_RT_BOOKINGS, "actor_id", INT4OID, 0},
	{OKNO_RT_BOOKINGS, "starts_at", TIMESTAMPTZOID, 0},
	{OKNO_RT_BOOKINGS, "ends_at", TIMESTAMPTZOID, 0},
	{OKNO_RT_IDEMPOTENCY, "actor_id", INT4OID, 0},
	{OKNO_RT_IDEMPOTENCY, "request_key", TEXTOID, 80},
	{OKNO_RT_IDEMPOTENCY, "fingerprint", TEXTOID, OKNO_FINGERPRINT_LEN},
	{OKNO_RT_IDEMPOTENCY, "fingerprint_version", INT2OID, 0},
	{OKNO_RT_IDEMPOTENCY, "response_body", JSONBOID, 0},
	{OKNO_RT_OUTBOX, "id", UUIDOID, 0},
	{OKNO_RT_OUTBOX, "kind", TEXTOID, 17},	/* booking_cancelled */
	{OKNO_RT_OUTBOX, "payload", JSONBOID, 0},
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
map_columns(int rti, Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
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
		attno = okno_attnum(RelationGetRelid(rel), supplied[a].name);
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
 * here does what the statements of store.c would do.  rels[] are locked.
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
direct_supported(Relation *rels, Relation actors_pkey, Relation resources_pkey)
{
	static const char *const booking_ins[] = {"resource_id", "actor_id", "starts_at", "ends_at"};
	static const char *const key_ins[] = {"actor_id", "request_key", "fingerprint",
	"fingerprint_version", "response_body"};
	static const char *const key_sel[] = {"response_body"};
	static const char *const event_ins[] = {"id", "kind", "payload"};
	static const char *const id_sel[] = {"id"};
	AttrNumber	ins[6];
	AttrNumber	sel[2];
	Form_pg_attribute idatt;
	int			rti;
	int			i;

	for (rti = 1; rti <= OKNO_RT_COUNT; rti++)
	{
		Relation	rel = rels[rti - 1];

		if (rel->rd_rel->relkind != RELKIND_RELATION ||
			rel->rd_rel->relispartition ||
			rel->rd_rel->relrowsecurity)
			return false;
		if (rti <= OKNO_RT_WRITTEN &&
			(rel->rd_rules != NULL || !only_foreign_key_triggers(rel) ||
			 !map_columns(rti, rel)))
			return false;
	}

	info.booking_id = okno_attnum(info.relids[OKNO_RT_BOOKINGS - 1], "id");
	if (info.booking_id == InvalidAttrNumber)
		return false;
	idatt = TupleDescAttr(RelationGetDescr(rels[OKNO_RT_BOOKINGS - 1]), info.booking_id - 1);
	if (idatt->attgenerated != '\0' ||
		(!idatt->atthasdef && idatt->attidentity == '\0') ||
		(idatt->atttypid != INT8OID && idatt->atttypid != INT4OID))
		return false;
	info.booking_id_type = idatt->atttypid;

	info.actors_id = okno_attnum(info.relids[OKNO_RT_ACTORS - 1], "id");
	info.resources_id = okno_attnum(info.relids[OKNO_RT_RESOURCES - 1], "id");
	if (info.actors_id == InvalidAttrNumber || info.resources_id == InvalidAttrNumber ||
		!okno_index_is(actors_pkey, info.relids[OKNO_RT_ACTORS - 1], 1, &info.actors_id) ||
		actors_pkey->rd_opcintype[0] != INT4OID ||
		!okno_index_is(resources_pkey, info.relids[OKNO_RT_RESOURCES - 1], 1, &info.resources_id) ||
		resources_pkey->rd_opcintype[0] != INT4OID)
		return false;

	/* the range table of the statement, with its privileges */
#define FILL(arr, names) \
	do { \
		for (i = 0; i < (int) lengthof(names); i++) \
			arr[i] = okno_attnum(info.relids[rti - 1], names[i]); \
		arr[i] = InvalidAttrNumber; \
	} while (0)
	rti = OKNO_RT_BOOKINGS;
	FILL(ins, booking_ins);
	sel[0] = info.booking_id;
	sel[1] = InvalidAttrNumber;
	okno_rt_add(&info.rt, info.relids[rti - 1], ACL_INSERT | ACL_SELECT, sel, ins);
	rti = OKNO_RT_IDEMPOTENCY;
	FILL(ins, key_ins);
	FILL(sel, key_sel);
	okno_rt_add(&info.rt, info.relids[rti - 1], ACL_INSERT | ACL_SELECT, sel, ins);
	rti = OKNO_RT_OUTBOX;
	FILL(ins, event_ins);
	okno_rt_add(&info.rt, info.relids[rti - 1], ACL_INSERT, NULL, ins);
	rti = OKNO_RT_ACTORS;
	FILL(sel, id_sel);
	okno_rt_add(&info.rt, info.relids[rti - 1], ACL_SELECT, sel, NULL);
	rti = OKNO_RT_RESOURCES;
	FILL(sel, id_sel);
	okno_rt_add(&info.rt, info.relids[rti - 1], ACL_SELECT, sel, NULL);
#undef FILL
	return true;
}

/*
 * Derive info for this generation; the tables and keys are locked.
 */
static void
prepare_info(uint64 generation, const Oid *relids, Relation *rels,
			 Relation actors_pkey, Relation resources_pkey)
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
	memcpy(info.relids, relids, sizeof(info.relids));

	oldcxt = MemoryContextSwitchTo(info.cxt);
	info.usable = direct_supported(rels, actors_pkey, resources_pkey);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * What the direct path knows about the tables of this cache generation,
 * derived now if it is not known yet; the tables and keys are locked.
 */
const OknoDirectInfo *
okno_direct_info(uint64 generation, const Oid *relids, Relation *rels,
				 Relation actors_pkey, Relation resources_pkey)
{
	if (info.generation != generation || info.cxt == NULL)
		prepare_info(generation, relids, rels, actors_pkey, resources_pkey);
	return &info;
}
