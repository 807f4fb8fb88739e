/*-------------------------------------------------------------------------
 *
 * verify.c
 *	  okno_verify(): okno's invariants over the application's tables and
 *	  its own, one row per problem found.
 *
 * The checks read the application's tables, so they are not a SQL
 * function of the install script (whose body would refer to tables the
 * extension does not own, and which pg_restore creates after the
 * extension) but one statement prepared here, run as the caller after the
 * tables are bound (a superuser's call as the tables' owner: owner.c).
 *
 * What the course's service legitimately left behind before okno served
 * the tables is not reported: bookings created up to
 * okno_purge_horizon.checked_since (recorded by okno_prepare_tables when
 * it first had to add okno's columns, or by the update from 0.5.0 for the
 * tables 0.5.0 adopted) are not asked for a key or an event, and the
 * course's cards (fingerprint version 0) may be written at any offset and
 * lack a field.  Keys and events purged on purpose (before the purge
 * horizon) are not missing.  Overlapping confirmed bookings are not
 * looked for (0.5.0 did): okno binds only to a bookings table whose
 * bookings_no_overlap excludes them, and PostgreSQL enforces it.
 *
 * A database with none of the application's five tables, one that uses
 * only operations' keys (0.7.0), has okno's own tables checked alone.
 *
 * Copyright (c) 2026, the okno authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "base/base.h"
#include "keys/keys.h"
#include "maintenance/maintenance.h"

PG_FUNCTION_INFO_V1(okno_verify);
PG_FUNCTION_INFO_V1(okno_verify_0_7);

/*
 * a IS DISTINCT FROM b, with pg_catalog's "=" (IS DISTINCT FROM looks its
 * operator up in the caller's search_path)
 */
#define DISTINCT(a, b) \
	" (NOT COALESCE((" a ") OPERATOR(pg_catalog.=) (" b "), (" a ") IS NULL AND (" b ") IS NULL)) "

/*
 * A stored card that does not match its booking: another actor, or (until
 * 0.6.0, where a booking never changed) another resource or other times.
 * From 0.7.0 an application moves bookings with operations of its own
 * (okno_idempotent, okno_emit('booking_rescheduled', ...)), and a create's
 * replay still returns the card of the booking as it was created: only the
 * actor, whose key it is, must still match.
 */
#define OKNO_SQL_CARD_ACTOR \
	"     WHERE b.actor_id OPERATOR(pg_catalog.<>) k.actor_id " \
	"        OR ((NOT k.course OR k.response_body OPERATOR(pg_catalog.?) 'actor_id') " \
	"            AND" DISTINCT("k.response_body OPERATOR(pg_catalog.->>) 'actor_id'", "b.actor_id::pg_catalog.text") ") "
#define OKNO_SQL_CARD_MISMATCH_0_6 \
	OKNO_SQL_CARD_ACTOR \
	"        OR ((NOT k.course OR k.response_body OPERATOR(pg_catalog.?) 'resource_id') " \
	"            AND" DISTINCT("k.response_body OPERATOR(pg_catalog.->>) 'resource_id'", "b.resource_id::pg_catalog.text") ") " \
	"        OR" DISTINCT("k.starts_at", "b.starts_at") \
	"        OR" DISTINCT("k.ends_at", "b.ends_at")

/*
 * the statement: a card's mismatch as card_mismatch, further checks
 * "extra" (UNION ALL ...) at its end; T(name) names the table it reads
 * (VERIFY_TABLE, or where Citus has them VERIFY_COPY, after copies: see
 * below)
 */
#define OKNO_SQL_VERIFY(card_mismatch, extra, T, copies) \
	"  WITH " copies " horizon AS ( " \
	"    SELECT COALESCE((SELECT h.keys_purged_before FROM %1$s.okno_purge_horizon AS h), '-infinity'::pg_catalog.timestamptz) AS keys, " \
	"           COALESCE((SELECT h.events_purged_before FROM %1$s.okno_purge_horizon AS h), '-infinity'::pg_catalog.timestamptz) AS events, " \
	"           COALESCE((SELECT h.checked_since FROM %1$s.okno_purge_horizon AS h), '-infinity'::pg_catalog.timestamptz) AS adopted " \
	"  ), " \
	"  keyed AS ( " \
	"    SELECT i.actor_id, i.request_key, i.fingerprint, i.response_body, " \
	"           i.fingerprint_version OPERATOR(pg_catalog.=) 0 AS course, " \
	"           CASE WHEN pg_catalog.jsonb_typeof(i.response_body OPERATOR(pg_catalog.->) 'id') OPERATOR(pg_catalog.=) 'number' " \
	"                THEN (i.response_body OPERATOR(pg_catalog.->>) 'id')::pg_catalog.numeric END AS booking_id, " \
	"           CASE WHEN (i.response_body OPERATOR(pg_catalog.->>) 'starts_at') OPERATOR(pg_catalog.~) " \
	"                     CASE WHEN i.fingerprint_version OPERATOR(pg_catalog.=) 0 " \
	"                          THEN '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d{1,6})?(Z|[+-]\\d\\d:\\d\\d)$' " \
	"                          ELSE '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d{6})?Z$' END " \
	"                THEN (i.response_body OPERATOR(pg_catalog.->>) 'starts_at')::pg_catalog.timestamptz END AS starts_at, " \
	"           CASE WHEN (i.response_body OPERATOR(pg_catalog.->>) 'ends_at') OPERATOR(pg_catalog.~) " \
	"                     CASE WHEN i.fingerprint_version OPERATOR(pg_catalog.=) 0 " \
	"                          THEN '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d{1,6})?(Z|[+-]\\d\\d:\\d\\d)$' " \
	"                          ELSE '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d{6})?Z$' END " \
	"                THEN (i.response_body OPERATOR(pg_catalog.->>) 'ends_at')::pg_catalog.timestamptz END AS ends_at " \
	"      FROM " T("idempotency") "AS i " \
	"  ), " \
	"  events AS ( " \
	"    SELECT o.id, o.kind, o.attempts, o.last_error, o.delivered_at, o.parked_at, " \
	"           CASE WHEN pg_catalog.jsonb_typeof(o.payload OPERATOR(pg_catalog.->) 'booking_id') OPERATOR(pg_catalog.=) 'number' " \
	"                THEN (o.payload OPERATOR(pg_catalog.->>) 'booking_id')::pg_catalog.numeric END AS booking_id " \
	"      FROM " T("outbox") "AS o " \
	"  ) " \
	"  SELECT v.problem, v.detail FROM ( " \
	"    SELECT 'booking without idempotency row'::pg_catalog.text AS problem, " \
	"           pg_catalog.format('booking %%s of actor %%s', b.id, b.actor_id) AS detail " \
	"      FROM " T("bookings") "AS b, horizon " \
	"     WHERE b.created_at OPERATOR(pg_catalog.>=) horizon.keys " \
	"       AND b.created_at OPERATOR(pg_catalog.>) horizon.adopted " \
	"       AND NOT EXISTS (SELECT FROM keyed AS k WHERE k.booking_id OPERATOR(pg_catalog.=) b.id) " \
	"    UNION ALL " \
	"    SELECT 'idempotency row without booking', " \
	"           pg_catalog.format('key %%s of actor %%s names booking %%s', k.request_key, k.actor_id, k.booking_id) " \
	"      FROM keyed AS k " \
	"     WHERE NOT EXISTS (SELECT FROM " T("bookings") "AS b WHERE b.id OPERATOR(pg_catalog.=) k.booking_id) " \
	"    UNION ALL " \
	"    SELECT 'response does not match its booking', " \
	"           pg_catalog.format('key %%s of actor %%s, booking %%s', k.request_key, k.actor_id, b.id) " \
	"      FROM keyed AS k JOIN " T("bookings") "AS b ON b.id OPERATOR(pg_catalog.=) k.booking_id " \
	card_mismatch \
	"    UNION ALL " \
	"    SELECT 'booking without booking_created event', " \
	"           pg_catalog.format('booking %%s of actor %%s', b.id, b.actor_id) " \
	"      FROM " T("bookings") "AS b, horizon " \
	"     WHERE b.created_at OPERATOR(pg_catalog.>=) horizon.events " \
	"       AND b.created_at OPERATOR(pg_catalog.>) horizon.adopted " \
	"       AND NOT EXISTS (SELECT FROM events AS e " \
	"                        WHERE e.kind OPERATOR(pg_catalog.=) 'booking_created' " \
	"                          AND e.booking_id OPERATOR(pg_catalog.=) b.id) " \
	"    UNION ALL " \
	"    SELECT 'event without booking', " \
	"           pg_catalog.format('%%s event %%s names booking %%s', e.kind, e.id, COALESCE(e.booking_id::pg_catalog.text, '(none)')) " \
	"      FROM events AS e " \
	"     WHERE e.kind OPERATOR(pg_catalog.=) ANY (ARRAY['booking_created', 'booking_cancelled']::pg_catalog.text[]) " \
	"       AND NOT EXISTS (SELECT FROM " T("bookings") "AS b WHERE b.id OPERATOR(pg_catalog.=) e.booking_id) " \
	"    UNION ALL " \
	"    SELECT 'more than one booking_created event', " \
	"           pg_catalog.format('booking %%s has %%s', e.booking_id, pg_catalog.count(*)) " \
	"      FROM events AS e " \
	"     WHERE e.kind OPERATOR(pg_catalog.=) 'booking_created' " \
	"     GROUP BY e.booking_id " \
	"    HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>) 1 " \
	"    UNION ALL " \
	"    SELECT 'failed event without last_error', " \
	"           pg_catalog.format('event %%s has %%s attempts', e.id, e.attempts) " \
	"      FROM events AS e " \
	"     WHERE e.attempts OPERATOR(pg_catalog.>) 0 AND e.last_error IS NULL " \
	"    UNION ALL " \
	"    SELECT 'event both delivered and parked', pg_catalog.format('event %%s', e.id) " \
	"      FROM events AS e " \
	"     WHERE e.delivered_at IS NOT NULL AND e.parked_at IS NOT NULL " \
	"    UNION ALL " \
	"    SELECT 'malformed fingerprint', pg_catalog.format('key %%s of actor %%s', k.request_key, k.actor_id) " \
	"      FROM keyed AS k " \
	"     WHERE k.fingerprint::pg_catalog.text OPERATOR(pg_catalog.!~) '^[0-9a-f]{64}$' " \
	"    UNION ALL " \
	"    SELECT 'discarded event still pending', " \
	"           pg_catalog.format('event %%s of subscriber %%s', d.event_id, d.subscriber) " \
	"      FROM %1$s.okno_discarded AS d " \
	"      JOIN " T("outbox") "AS o ON o.id OPERATOR(pg_catalog.=) d.event_id " \
	"     WHERE d.subscriber OPERATOR(pg_catalog.=) 'default' AND o.delivered_at IS NULL " \
	"    UNION ALL " \
	"    SELECT 'discard record does not match its event', " \
	"           pg_catalog.format('event %%s of subscriber %%s', d.event_id, d.subscriber) " \
	"      FROM %1$s.okno_discarded AS d " \
	"      JOIN " T("outbox") "AS o ON o.id OPERATOR(pg_catalog.=) d.event_id " \
	"     WHERE o.kind::pg_catalog.text OPERATOR(pg_catalog.<>) d.kind::pg_catalog.text " \
	"        OR o.payload OPERATOR(pg_catalog.<>) d.payload " \
	"    UNION ALL " \
	"    SELECT 'discarded event still pending', " \
	"           pg_catalog.format('event %%s of subscriber %%s', d.event_id, d.subscriber) " \
	"      FROM %1$s.okno_discarded AS d " \
	"      JOIN %1$s.okno_delivery AS x " \
	"        ON x.subscriber OPERATOR(pg_catalog.=) d.subscriber AND x.event_id OPERATOR(pg_catalog.=) d.event_id " \
	"     WHERE x.delivered_at IS NULL " \
	"    UNION ALL " \
	"    SELECT 'delivery state of an unknown subscriber', " \
	"           pg_catalog.format('event %%s of subscriber %%s', x.event_id, x.subscriber) " \
	"      FROM %1$s.okno_delivery AS x " \
	"     WHERE NOT EXISTS (SELECT FROM %1$s.okno_subscriber AS u " \
	"                        WHERE u.name OPERATOR(pg_catalog.=) x.subscriber) " \
	"    UNION ALL " \
	"    SELECT 'delivery state of a missing event', " \
	"           pg_catalog.format('event %%s of subscriber %%s', x.event_id, x.subscriber) " \
	"      FROM %1$s.okno_delivery AS x " \
	"     WHERE NOT EXISTS (SELECT FROM " T("outbox") "AS o " \
	"                        WHERE o.id OPERATOR(pg_catalog.=) x.event_id) " \
	"    UNION ALL " \
	"    SELECT 'event both delivered and parked', " \
	"           pg_catalog.format('event %%s of subscriber %%s', x.event_id, x.subscriber) " \
	"      FROM %1$s.okno_delivery AS x " \
	"     WHERE x.delivered_at IS NOT NULL AND x.parked_at IS NOT NULL " \
	extra \
	"  ) AS v " \
	"  ORDER BY 1, 2 "

/* the tables themselves */
#define VERIFY_TABLE(name) "%1$s." name " "

static OknoPlan verify_plan = {
	.sql = OKNO_SQL_VERIFY(OKNO_SQL_CARD_MISMATCH_0_6, "", VERIFY_TABLE, ""),
	.nargs = 0
};

/*
 * A pending tombstone (expired_at 'infinity') is written beside its key by
 * a purge on a Citus cluster, which deletes the key in a later purge
 * (purge.c): not a key run again.
 */
#define OKNO_SQL_TOMBSTONE_SETTLED \
	" AND t.expired_at OPERATOR(pg_catalog.<>) 'infinity'::pg_catalog.timestamptz "

/*
 * 0.7.0: checks of okno's own tables alone: operations' keys and the
 * tombstones of expired keys.  A stored key that also has a tombstone was
 * run again after it expired (a writer that does not look at tombstones,
 * or a tombstone restored beside a key it had replaced).
 */
#define OKNO_SQL_MALFORMED_KEYS(T) \
	"    SELECT 'malformed fingerprint'::pg_catalog.text AS problem, " \
	"           pg_catalog.format('key %%s of operation %%s in scope %%s', k.request_key, k.operation, k.scope) AS detail " \
	"      FROM " T("okno_key") "AS k " \
	"     WHERE pg_catalog.octet_length(k.fingerprint) OPERATOR(pg_catalog.<>) 32 " \
	"    UNION ALL " \
	"    SELECT 'malformed tombstone', " \
	"           pg_catalog.format('tombstone %%s', pg_catalog.encode(t.key_hash, 'hex')) " \
	"      FROM " T("okno_key_tombstone") "AS t " \
	"     WHERE pg_catalog.octet_length(t.key_hash) OPERATOR(pg_catalog.<>) 32 "
#define OKNO_SQL_OPERATION_KEY_TOMBSTONE(T) \
	"    SELECT 'stored key has a tombstone', " \
	"           pg_catalog.format('key %%s of operation %%s in scope %%s', k.request_key, k.operation, k.scope) " \
	"      FROM " T("okno_key") "AS k " \
	"      JOIN " T("okno_key_tombstone") "AS t " \
	"        ON t.key_hash OPERATOR(pg_catalog.=) " \
	OKNO_SQL_OPERATION_KEY_HASH("k.operation", "k.scope", "k.request_key") \
	OKNO_SQL_TOMBSTONE_SETTLED

/* 0.7.0: all of them, a booking's stored key with a tombstone too */
#define VERIFY_0_7_SQL(T, copies) \
	OKNO_SQL_VERIFY(OKNO_SQL_CARD_ACTOR, \
		"    UNION ALL " \
		OKNO_SQL_MALFORMED_KEYS(T) \
		"    UNION ALL " \
		"    SELECT 'stored key has a tombstone', " \
		"           pg_catalog.format('key %%s of actor %%s', k.request_key, k.actor_id) " \
		"      FROM keyed AS k " \
		"      JOIN " T("okno_key_tombstone") "AS t " \
		"        ON t.key_hash OPERATOR(pg_catalog.=) " OKNO_SQL_BOOKING_KEY_HASH("k.actor_id", "k.request_key") \
		OKNO_SQL_TOMBSTONE_SETTLED \
		"    UNION ALL " \
		OKNO_SQL_OPERATION_KEY_TOMBSTONE(T), T, copies)
static OknoPlan verify_0_7_plan = {
	.sql = VERIFY_0_7_SQL(VERIFY_TABLE, ""),
	.nargs = 0
};

/*
 * 0.7.0, in a database with none of the application's five tables (one
 * that uses only operations' keys): okno's own tables' checks alone
 */
#define VERIFY_OWN_SQL(T, with) \
	with \
	"  SELECT v.problem, v.detail FROM ( " \
	OKNO_SQL_MALFORMED_KEYS(T) \
	"    UNION ALL " \
	OKNO_SQL_OPERATION_KEY_TOMBSTONE(T) \
	"  ) AS v " \
	"  ORDER BY 1, 2 "
static OknoPlan verify_own_plan = {
	.sql = VERIFY_OWN_SQL(VERIFY_TABLE, ""),
	.nargs = 0,
	.own = true
};

/*
 * Where Citus has any of the tables: Citus cannot plan the checks' joins
 * and correlated subqueries between tables it distributes by different
 * columns (bookings by resource, idempotency by actor, outbox by bucket,
 * okno's keys and tombstones by theirs).  So each such table is read once,
 * the columns the checks read, into a materialized common table
 * expression, which Citus plans on its own and brings to this node; the
 * checks then run here on those copies and on okno's other tables, each
 * node's own.  That reads the tables whole through this node: okno_verify
 * is an operator's check, and reads them whole on one server too.
 */
#define VERIFY_COPY(name) "okno_v_" name " "
#define VERIFY_KEY_COPIES \
	" okno_v_okno_key AS MATERIALIZED (" \
	"  SELECT k.operation, k.scope, k.request_key, k.fingerprint FROM %1$s.okno_key AS k), " \
	" okno_v_okno_key_tombstone AS MATERIALIZED (" \
	"  SELECT t.key_hash, t.expired_at FROM %1$s.okno_key_tombstone AS t) "
#define VERIFY_COPIES \
	" okno_v_bookings AS MATERIALIZED (" \
	"  SELECT b.id, b.actor_id, b.created_at FROM %1$s.bookings AS b), " \
	" okno_v_idempotency AS MATERIALIZED (" \
	"  SELECT i.actor_id, i.request_key, i.fingerprint, i.fingerprint_version, i.response_body" \
	"    FROM %1$s.idempotency AS i), " \
	" okno_v_outbox AS MATERIALIZED (" \
	"  SELECT o.id, o.kind, o.payload, o.attempts, o.last_error, o.delivered_at, o.parked_at" \
	"    FROM %1$s.outbox AS o), " \
	VERIFY_KEY_COPIES ", "
static OknoPlan verify_0_7_citus_plan = {
	.sql = VERIFY_0_7_SQL(VERIFY_COPY, VERIFY_COPIES),
	.nargs = 0
};
static OknoPlan verify_own_citus_plan = {
	.sql = VERIFY_OWN_SQL(VERIFY_COPY, "  WITH" VERIFY_KEY_COPIES),
	.nargs = 0,
	.own = true
};

/*
 * One row for each change okno_prepare_tables() would make to the tables
 * (okno 0.7.0 and later): a table it has not prepared for this okno, which
 * serves them as before until it does (base.h) but for what needs the
 * change (okno_emit's order keys).
 */
static void
report_unprepared(ReturnSetInfo *rsinfo)
{
	ListCell   *lc;

	foreach(lc, okno_tables_unprepared())
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		values[0] = CStringGetTextDatum("table not prepared");
		values[1] = CStringGetTextDatum(psprintf("%s; fix: SELECT okno_prepare_tables()",
												 (const char *) lfirst(lc)));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * Whether Citus has any of the tables the checks read: okno's keys and
 * tombstones, and unless own (they are absent) the application's.
 */
static bool
citus_tables(bool own)
{
	Oid			key = okno_relid_by_name(OKNO_KEY_TABLE);
	Oid			tombstone = okno_relid_by_name(OKNO_TOMBSTONE_TABLE);

	return (!own && okno_binding_citus(okno_binding())) ||
		(OidIsValid(key) && okno_citus_table(key)) ||
		(OidIsValid(tombstone) && okno_citus_table(tombstone));
}

/* run plan, one row per problem into the function's result */
static void
verify(FunctionCallInfo fcinfo, OknoPlan *plan)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OknoGuard	guard;
	Datum		values[2];
	bool		nulls[2];
	uint64		i;
	int			rc;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);

	/* a database that uses only operations' keys: okno's own tables */
	if (plan == &verify_0_7_plan && okno_application_tables_absent())
		plan = &verify_own_plan;
	/* where Citus has any of the tables, on copies (see above) */
	if (citus_tables(plan == &verify_own_plan))
	{
		if (plan == &verify_plan)
			okno_refuse_on_citus("okno_verify() of okno 0.6");
		plan = plan == &verify_own_plan ? &verify_own_citus_plan : &verify_0_7_citus_plan;
	}
	if (plan->own)
		okno_guard_begin_owner(&guard, InvalidOid);
	else
		okno_guard_begin(&guard);
	okno_spi_connect();
	rc = SPI_execute_plan(okno_plan(plan), NULL, NULL, true, 0);
	okno_check_spi(rc, SPI_OK_SELECT, "okno_verify");
	for (i = 0; i < SPI_processed; i++)
	{
		CHECK_FOR_INTERRUPTS();
		heap_deform_tuple(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, values, nulls);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	if (plan == &verify_0_7_plan)
		report_unprepared(rsinfo);
	okno_spi_finish();
	okno_guard_end(&guard);
}

/*
 * okno_verify() RETURNS TABLE (problem text, detail text)
 */
Datum
okno_verify(PG_FUNCTION_ARGS)
{
	verify(fcinfo, &verify_plan);
	return (Datum) 0;
}

/*
 * The same, with operations' keys and tombstones (okno 0.7.0).
 */
Datum
okno_verify_0_7(PG_FUNCTION_ARGS)
{
	verify(fcinfo, &verify_0_7_plan);
	return (Datum) 0;
}
