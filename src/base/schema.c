/*-------------------------------------------------------------------------
 *
 * schema.c
 *	  okno's schema, the binding to the tables in it, and the kept plans.
 *
 * okno is not relocatable but has no fixed schema: CREATE EXTENSION puts it
 * in the current schema or the one named with SCHEMA.  Every SQL text okno
 * runs names that schema explicitly, so nothing depends on the caller's
 * search_path.  PostgreSQL 15 does not export get_extension_schema(), so
 * the schema is read from pg_extension here and cached for the backend's
 * life, together with the binding to the application's tables in it
 * (bind.c: their OIDs, those of the indexes okno scans directly, and what
 * else the binding found).
 *
 * The binding (and with it every prepared plan) is dropped when any of
 * those relations gets a relcache invalidation (ALTER TABLE, CREATE INDEX,
 * DROP EXTENSION, VACUUM's statistics update ...), the schema too when any
 * schema changes: the next call binds again, checking the tables anew, and
 * prepares its plans anew.  That is rare and cheap, and it makes an
 * owner's ALTER TABLE, and DROP EXTENSION okno; CREATE EXTENSION okno
 * SCHEMA other, work in a session that had already used okno.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "base/base.h"

static bool schema_valid = false;	/* cache_schema* and cache_nsp */
static bool cache_valid = false;	/* and the binding too */
static uint64 cache_generation = 0;
static uint64 schema_generation = 0;	/* the same for the schema alone */
static Oid	cache_nsp = InvalidOid;
static char *cache_schema = NULL;	/* quoted, in TopMemoryContext */
static char *cache_schema_raw = NULL;	/* unquoted, in TopMemoryContext */
static char cache_extversion[NAMEDATALEN];	/* pg_extension.extversion */
static int	cache_version = 0;	/* the same as a number (OKNO_V) */
static Oid	cache_delivery = InvalidOid;	/* okno's own okno_delivery */
static OknoBinding cache_binding;
static OknoPlanForm cache_plan_form = OKNO_PLAN_CURRENT;	/* of the plans' texts */

static void
okno_relcache_callback(Datum arg pg_attribute_unused(), Oid relid)
{
	int			i;

	if (!OidIsValid(relid))
	{
		cache_valid = false;
		return;
	}
	/*
	 * okno's own okno_delivery: an update of okno alters it (0.7.0 renamed
	 * a column), and a DROP EXTENSION drops it; the version and the plans'
	 * texts are looked up again after either
	 */
	if (relid == cache_delivery)
	{
		cache_valid = false;
		return;
	}
	for (i = 0; i < OKNO_NUM_TABLES; i++)
	{
		if (cache_binding.relid[i] == relid || cache_binding.pkey_index[i] == relid)
		{
			cache_valid = false;
			return;
		}
	}
}

static void
okno_namespace_callback(Datum arg pg_attribute_unused(),
						int cacheid pg_attribute_unused(),
						uint32 hashvalue pg_attribute_unused())
{
	schema_valid = false;
	cache_valid = false;
}

/*
 * Register the invalidation callbacks that drop the cache, and the guard's
 * (owner.c) and the direct relation map's (direct.c).
 */
void
okno_base_init(void)
{
	CacheRegisterRelcacheCallback(okno_relcache_callback, (Datum) 0);
	CacheRegisterSyscacheCallback(NAMESPACEOID, okno_namespace_callback, (Datum) 0);
	okno_guard_init();
	okno_direct_init();
}

/*
 * okno's row of pg_extension, read now (PostgreSQL 15 has no syscache for
 * pg_extension); false if okno is not installed in this database.
 */
bool
okno_read_extension(OknoExtension *ext)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		found;

	memset(ext, 0, sizeof(OknoExtension));
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("okno"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	found = HeapTupleIsValid(tup);
	if (found)
	{
		Form_pg_extension form = (Form_pg_extension) GETSTRUCT(tup);
		bool		isnull;
		Datum		v;

		ext->oid = form->oid;
		ext->nsp = form->extnamespace;
		ext->owner = form->extowner;
		v = heap_getattr(tup, Anum_pg_extension_extversion, RelationGetDescr(rel), &isnull);
		if (!isnull)
			text_to_cstring_buffer(DatumGetTextPP(v), ext->version, sizeof(ext->version));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * The OID of the schema okno is installed in, read from pg_extension with
 * the version installed.
 */
static Oid
lookup_extension_schema(void)
{
	OknoExtension ext;

	if (!okno_read_extension(&ext))
	{
		schema_valid = false;
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("extension \"okno\" is not installed in this database"),
				 errhint("Run CREATE EXTENSION okno CASCADE.")));
	}
	strlcpy(cache_extversion, ext.version, sizeof(cache_extversion));
	return ext.nsp;
}

/* okno's schema, looked up again after any change to a schema */
static void
okno_ensure_schema(void)
{
	Oid			nsp;
	char	   *name;
	MemoryContext oldcxt;

	if (schema_valid)
		return;

	/* assume valid from here; an invalidation arriving meanwhile resets it */
	schema_valid = true;
	cache_valid = false;
	nsp = lookup_extension_schema();
	name = get_namespace_name(nsp);
	if (name == NULL)
	{
		schema_valid = false;
		elog(ERROR, "cache lookup failed for namespace %u", nsp);
	}

	oldcxt = MemoryContextSwitchTo(TopMemoryContext);
	if (cache_schema != NULL)
		pfree(cache_schema);
	if (cache_schema_raw != NULL)
		pfree(cache_schema_raw);
	cache_schema_raw = pstrdup(name);
	cache_schema = pstrdup(quote_identifier(name));
	MemoryContextSwitchTo(oldcxt);
	cache_nsp = nsp;
	schema_generation++;
}

/*
 * The schema and the binding to the tables in it (bind.c), done again after
 * any invalidation; a binding that fails leaves nothing cached.
 */
static void
okno_ensure_cache(void)
{
	OknoBinding binding;

	if (cache_valid && schema_valid)
		return;
	okno_ensure_schema();
	/* the version installed now (ALTER EXTENSION UPDATE changes no schema) */
	if (lookup_extension_schema() != cache_nsp)
	{
		schema_valid = false;
		okno_ensure_schema();
	}

	{
		int			major = 0,
					minor = 0,
					patch = 0;

		/* an unknown form of version (none of okno's) is the newest */
		if (sscanf(cache_extversion, "%d.%d.%d", &major, &minor, &patch) == 3)
			cache_version = OKNO_V(major, minor, patch);
		else
			cache_version = INT_MAX;
	}
	cache_delivery = get_relname_relid("okno_delivery", cache_nsp);

	/* assume valid from here; an invalidation arriving meanwhile resets it */
	cache_valid = true;
	PG_TRY();
	{
		okno_bind_tables(cache_nsp, cache_schema, cache_version, &binding);
	}
	PG_CATCH();
	{
		cache_valid = false;
		memset(&cache_binding, 0, sizeof(cache_binding));
		PG_RE_THROW();
	}
	PG_END_TRY();
	cache_binding = binding;
	cache_plan_form = cache_version < OKNO_V(0, 7, 0) ? OKNO_PLAN_NO_ORDER_KEYS :
		!binding.order_keys ? OKNO_PLAN_UNPREPARED : OKNO_PLAN_CURRENT;
	cache_generation++;
}

/*
 * The binding to okno's tables (bound first if need be).
 */
const OknoBinding *
okno_binding(void)
{
	okno_ensure_cache();
	return &cache_binding;
}

/*
 * The name of okno's schema, unquoted (for error fields and messages).
 */
const char *
okno_schema_name(void)
{
	okno_ensure_schema();
	return cache_schema_raw;
}

/*
 * The OID of okno's relation relname (InvalidOid if it does not exist),
 * looked up by name each time (a syscache probe), not cached: for the
 * relations an older okno lacks, and those whose frequent changes would
 * make every kept plan prepared again if they were cached.
 */
Oid
okno_relid_by_name(const char *relname)
{
	okno_ensure_schema();
	return get_relname_relid(relname, cache_nsp);
}

/*
 * Whether the schema has none of the application's five tables (bind.c).
 */
bool
okno_application_tables_absent(void)
{
	okno_ensure_schema();
	return okno_tables_absent(cache_nsp);
}

/*
 * The OID of one of okno's relations (InvalidOid if it does not exist).
 */
Oid
okno_relid(OknoRel rel)
{
	okno_ensure_cache();
	switch (rel)
	{
		case OKNO_REL_ACTORS_PKEY:
			return cache_binding.pkey_index[OKNO_REL_ACTORS];
		case OKNO_REL_RESOURCES_PKEY:
			return cache_binding.pkey_index[OKNO_REL_RESOURCES];
		case OKNO_REL_IDEMPOTENCY_PKEY:
			return cache_binding.pkey_index[OKNO_REL_IDEMPOTENCY];
		default:
			Assert(rel < OKNO_NUM_TABLES);
			return cache_binding.relid[rel];
	}
}

/*
 * The version of okno installed in this database (pg_extension.extversion)
 * as OKNO_V(major, minor, patch), read when the tables were bound: the new
 * library serves an older install as its own version did.
 */
int
okno_installed_version(void)
{
	okno_ensure_cache();
	return cache_version;
}

/*
 * The same, read from pg_extension now rather than at the last binding,
 * and without binding (for a call that prepares tables that cannot serve
 * yet).
 */
int
okno_installed_version_uncached(void)
{
	int			major = 0,
				minor = 0,
				patch = 0;

	okno_ensure_schema();
	(void) lookup_extension_schema();
	if (sscanf(cache_extversion, "%d.%d.%d", &major, &minor, &patch) == 3)
		return OKNO_V(major, minor, patch);
	return INT_MAX;
}

/*
 * A number that changes whenever the cached schema and OIDs are looked up
 * again: whatever is derived from them must then be derived again.
 */
uint64
okno_cache_generation(void)
{
	okno_ensure_cache();
	return cache_generation;
}

/*
 * The text of plan p in the form for the installed okno and the bound
 * tables (base.h's OknoPlanForm): where p has no text of that form, that
 * of the nearest newer one.  A plan of okno's own relations has one text.
 */
static const char *
plan_text(const OknoPlan *p)
{
	int			form;

	if (p->own)
		return p->sql;
	for (form = cache_plan_form; form > OKNO_PLAN_CURRENT; form--)
		if (p->older[form - 1] != NULL)
			return p->older[form - 1];
	return p->sql;
}

/*
 * The kept plan for p, prepared (again) if the cache has changed since
 * (for a plan of okno's own relations, the schema: it binds no tables).
 * The caller must be connected to SPI.
 */
SPIPlanPtr
okno_plan(OknoPlan *p)
{
	uint64		generation;

	if (p->own)
	{
		/* okno's own relations: the schema is all it needs */
		Assert(p->older[0] == NULL);
		okno_ensure_schema();
		generation = schema_generation;
	}
	else
	{
		okno_ensure_cache();
		generation = cache_generation;
	}
	if (p->plan == NULL || p->generation != generation)
	{
		char	   *sql;
		SPIPlanPtr	plan;

		if (p->plan != NULL)
		{
			SPI_freeplan(p->plan);
			p->plan = NULL;
		}
		sql = psprintf(plan_text(p), cache_schema);
		/*
		 * With cursor_options CURSOR_OPT_GENERIC_PLAN the plan is planned
		 * once; otherwise the plan cache plans the first five executions
		 * for their parameters' values and keeps doing so for every later
		 * one whenever the generic plan's estimate looks dearer, which it
		 * did for the drains: planning each call cost more than the drain.
		 */
		plan = SPI_prepare_cursor(sql, p->nargs, p->argtypes, p->cursor_options);
		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed for \"%s\": %s",
				 sql, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "SPI_keepplan failed");
		p->plan = plan;
		p->generation = generation;
		pfree(sql);
	}
	return p->plan;
}

/*
 * Connect to SPI / disconnect from it; failing is a can't-happen error.
 */
void
okno_spi_connect(void)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

void
okno_spi_finish(void)
{
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
}

/*
 * Raise a can't-happen error unless a SPI call returned what was expected.
 */
void
okno_check_spi(int rc, int expected, const char *what)
{
	if (rc != expected)
		elog(ERROR, "SPI execution failed for %s: %s", what, SPI_result_code_string(rc));
}
