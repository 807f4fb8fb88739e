/*-------------------------------------------------------------------------
 *
 * session.c
 *	  The set-up of a fresh connection: okno's schema, its functions, the
 *	  qualified statements, and how to wait.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/session.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relay.h"

static SqlStatus find_schema(Relay *r, char **schema);
static char *quote_schema(Relay *r, const char *schema);
static SqlStatus check_functions(Relay *r, const char *schema, const char *quoted);
static char *subscriber_args(Relay *r, const char *before);
static void build_statements(Relay *r, const char *quoted);
static SqlStatus choose_wait(Relay *r, const char *schema, const char *quoted);
static void build_wait_statement(Relay *r, const char *quoted);

/*
 * On a fresh connection: find okno's schema, check that it has the 0.2.0
 * functions, build the qualified statements, and get ready to
 * wait: with --wait=server, if okno has okno_wait; otherwise (and with
 * --wait=listen) LISTEN.  Missing okno is fatal (exit 3).
 *
 * The session is left as it is: no SET, no session setting, no
 * session lock, no prepared statement, no LISTEN but with
 * --wait=listen.  Through a pooler in transaction mode (PgBouncer's
 * pool_mode = transaction) the server session is lent to other clients
 * between our transactions, and a session setting would stay with it: a
 * set_config('search_path', 'pg_catalog', false) here would make every
 * client's unqualified okno_create_booking() fail on the connections the
 * relay has used.  So every statement names the schema of every
 * function, operator and type it uses (pg_catalog's included), so that
 * the session's search_path, whatever it is, changes nothing of the
 * relay's own statements: it is left as the role's settings make it for
 * the owner's triggers on outbox, which fire as for any other writer.  The
 * delivery transactions turn off the timeouts that would cut them short
 * with SET LOCAL, which ends with them (sql_drain).  application_name and
 * client_encoding are startup parameters, which a pooler tracks per
 * client.
 */
SqlStatus
setup_session(Relay *r)
{
	SqlStatus	st;
	char	   *schema;
	char	   *quoted;

	if ((st = find_schema(r, &schema)) != SQL_OK)
		return st;
	quoted = quote_schema(r, schema);
	st = check_functions(r, schema, quoted);
	if (st == SQL_OK)
		build_statements(r, quoted);

	/* --once never waits */
	if (st == SQL_OK && !r->opts.once)
	{
		if (r->opts.wait == WAIT_SERVER)
			st = choose_wait(r, schema, quoted);
		if (st == SQL_OK)
			build_wait_statement(r, quoted);
	}
	PQfreemem(quoted);
	free(schema);

	if (st != SQL_OK || r->opts.once || r->wait_mode != WAIT_LISTEN)
		return st;
	return check_result(r, run_statement(r, "LISTEN " NOTIFY_CHANNEL, 0, NULL, "LISTEN"),
						PGRES_COMMAND_OK, "LISTEN");
}

/* okno's schema: --schema, or where pg_extension says okno is (malloc'd) */
static SqlStatus
find_schema(Relay *r, char **schema)
{
	PGresult   *res;
	SqlStatus	st;

	if (r->opts.schema != NULL)
	{
		*schema = relay_strdup(r->opts.schema);
		return SQL_OK;
	}
	res = run_statement(r,
						"SELECT n.nspname FROM pg_catalog.pg_extension e"
						" JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace"
						" WHERE e.extname OPERATOR(pg_catalog.=) 'okno'",
						0, NULL, "looking up okno's schema");
	if ((st = check_result(r, res, PGRES_TUPLES_OK, "looking up okno's schema")) != SQL_OK)
		return st;
	if (PQntuples(res) != 1)
	{
		PQclear(res);
		relay_fatal(EXIT_SERVER, "okno is not installed in database \"%s\" (CREATE EXTENSION okno CASCADE)",
					PQdb(r->conn));
	}
	*schema = relay_strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return SQL_OK;
}

/* the schema as an identifier (PQfreemem it) */
static char *
quote_schema(Relay *r, const char *schema)
{
	char	   *quoted = PQescapeIdentifier(r->conn, schema, strlen(schema));

	if (quoted == NULL)
		relay_fatal(EXIT_SERVER, "could not quote schema name \"%s\": %s",
					schema, one_line(PQerrorMessage(r->conn)));
	return quoted;
}

/* okno 0.2.0's functions (0.5.0's for a subscriber), in that schema */
static SqlStatus
check_functions(Relay *r, const char *schema, const char *quoted)
{
	/* as named in messages, and as looked up (types qualified) */
	static const char *const functions[] = {
		"okno_drain(integer)",
		"okno_record_failure(uuid,text)",
		"okno_release(uuid)"
	};
	static const char *const subscriber_functions[] = {
		"okno_drain(integer,text)",
		"okno_record_failure(uuid,text,text)",
		"okno_release(uuid,text)"
	};
	static const char *const signatures[] = {
		"okno_drain(pg_catalog.int4)",
		"okno_record_failure(pg_catalog.uuid,pg_catalog.text)",
		"okno_release(pg_catalog.uuid)"
	};
	static const char *const subscriber_signatures[] = {
		"okno_drain(pg_catalog.int4,pg_catalog.text)",
		"okno_record_failure(pg_catalog.uuid,pg_catalog.text,pg_catalog.text)",
		"okno_release(pg_catalog.uuid,pg_catalog.text)"
	};
	PGresult   *res;
	SqlStatus	st;
	char		signature[600];
	const char *param[1];
	int			i;

	for (i = 0; i < (int) (sizeof(functions) / sizeof(functions[0])); i++)
	{
		snprintf(signature, sizeof(signature), "%s.%s", quoted,
				 r->opts.subscriber != NULL ? subscriber_signatures[i] : signatures[i]);
		param[0] = signature;
		res = run_statement(r, "SELECT pg_catalog.to_regprocedure($1) IS NOT NULL",
							1, param, "looking up okno's functions");
		if ((st = check_result(r, res, PGRES_TUPLES_OK, "looking up okno's functions")) != SQL_OK)
			return st;
		if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, 0), "t") != 0)
		{
			PQclear(res);
			relay_fatal(EXIT_SERVER,
						"okno is not installed in schema \"%s\" of database \"%s\", or it is older than %s (no %s)",
						schema, PQdb(r->conn), r->opts.subscriber != NULL ? "0.5.0" : "0.2.0",
						r->opts.subscriber != NULL ? subscriber_functions[i] : functions[i]);
		}
		PQclear(res);
	}
	return SQL_OK;
}

/*
 * The subscriber's name as a literal argument (the server checks it),
 * after BEFORE: ", 'name'" for the delivery functions, ", NULL, 'name'"
 * for okno_wait; "" for the default subscriber.  Malloc'd.
 */
static char *
subscriber_args(Relay *r, const char *before)
{
	char	   *literal;
	char	   *args;

	if (r->opts.subscriber == NULL)
		return relay_strdup("");
	literal = PQescapeLiteral(r->conn, r->opts.subscriber, strlen(r->opts.subscriber));
	if (literal == NULL)
		relay_fatal(EXIT_SERVER, "could not quote subscriber name \"%s\": %s",
					r->opts.subscriber, one_line(PQerrorMessage(r->conn)));
	args = relay_malloc(strlen(before) + strlen(literal) + 1);
	sprintf(args, "%s%s", before, literal);
	PQfreemem(literal);
	return args;
}

/* the delivery transaction's statements, every name qualified */
static void
build_statements(Relay *r, const char *quoted)
{
	char	   *subscriber = subscriber_args(r, ", ");
	size_t		len;

	free(r->sql_drain);
	free(r->sql_drain_ids);
	free(r->sql_event);
	free(r->sql_record_failure);
	free(r->sql_release);
	/*
	 * The delivery transaction lasts as long as its recipient takes (a slow
	 * reader, a command up to --exec-timeout): a session's
	 * idle_in_transaction_session_timeout, or PostgreSQL 17's
	 * transaction_timeout, shorter than that would end the session and the
	 * transaction with it, and the event would be handed out again and
	 * again.  So they are off for the transaction (SET LOCAL: nothing of it
	 * stays in the session, which a pooler may lend to someone else).
	 */
	len = strlen(quoted) + strlen(subscriber) + 300;
	r->sql_drain = relay_malloc(len);
	snprintf(r->sql_drain, len,
			 "BEGIN; SET LOCAL idle_in_transaction_session_timeout = 0;%s"
			 " SELECT event_id, kind, payload, attempts FROM %s.okno_drain(%d%s)",
			 PQserverVersion(r->conn) >= 170000 ? " SET LOCAL transaction_timeout = 0;" : "",
			 quoted, r->opts.exec_command != NULL ? 1 : r->opts.batch, subscriber);

	/*
	 * The careful transaction (batch.c): one event's id and attempts, then
	 * its kind and payload read by id from outbox (a subscriber's events
	 * are outbox's too), so that reading them may fail alone.
	 */
	r->sql_drain_ids = relay_malloc(len);
	snprintf(r->sql_drain_ids, len,
			 "BEGIN; SET LOCAL idle_in_transaction_session_timeout = 0;%s"
			 " SELECT event_id, attempts FROM %s.okno_drain(1%s)",
			 PQserverVersion(r->conn) >= 170000 ? " SET LOCAL transaction_timeout = 0;" : "",
			 quoted, subscriber);
	r->sql_event = relay_malloc(len);
	snprintf(r->sql_event, len,
			 "SELECT o.kind::pg_catalog.text, o.payload FROM %s.outbox AS o"
			 " WHERE o.id OPERATOR(pg_catalog.=) $1::pg_catalog.uuid",
			 quoted);
	len = strlen(quoted) + strlen(subscriber) + 300;
	r->sql_record_failure = relay_malloc(len);
	snprintf(r->sql_record_failure, len,
			 "SELECT f.attempts, f.parked_at IS NOT NULL,"
			 " pg_catalog.date_part('epoch', f.available_at OPERATOR(pg_catalog.-) pg_catalog.clock_timestamp())"
			 " FROM %s.okno_record_failure($1::pg_catalog.uuid, $2::pg_catalog.text%s) AS f",
			 quoted, subscriber);
	r->sql_release = relay_malloc(len);
	snprintf(r->sql_release, len,
			 "SELECT pg_catalog.count(*) FILTER (WHERE r)"
			 " FROM pg_catalog.unnest($1::pg_catalog.uuid[]) AS u(id),"
			 " LATERAL %s.okno_release(u.id%s) AS r",
			 quoted, subscriber);
	free(subscriber);
}

/*
 * --wait=server: wait in the server if okno has okno_wait and this role
 * may use it, otherwise with LISTEN and polling (said when it changes).
 */
static SqlStatus
choose_wait(Relay *r, const char *schema, const char *quoted)
{
	WaitMode	previous = r->wait_mode;
	char		signature[600];
	char		outbox[600];
	char		delivery[600];
	char		subscribers[600];
	const char *params[5];
	const char *how;
	PGresult   *res;
	SqlStatus	st;

	/*
	 * what the wait reads: due events and who holds them (xmax), and for
	 * a subscriber its rows and what it has not copied
	 */
	snprintf(signature, sizeof(signature), "%s.okno_wait(pg_catalog.int4,pg_catalog.bool%s)",
			 quoted, r->opts.subscriber != NULL ? ",pg_catalog.text" : "");
	snprintf(outbox, sizeof(outbox), "%s.outbox", quoted);
	snprintf(delivery, sizeof(delivery), "%s.okno_delivery", quoted);
	snprintf(subscribers, sizeof(subscribers), "%s.okno_subscriber", quoted);
	params[0] = signature;
	params[1] = outbox;
	params[2] = delivery;
	params[3] = subscribers;
	params[4] = r->opts.subscriber != NULL ? "t" : "f";
	res = run_statement(r,
					   "SELECT CASE WHEN pg_catalog.to_regprocedure($1) IS NULL THEN 'missing'"
					   " WHEN NOT pg_catalog.has_function_privilege(pg_catalog.to_regprocedure($1), 'EXECUTE')"
					   "   OR CASE WHEN $5::pg_catalog.bool"
					   "      THEN NOT pg_catalog.has_column_privilege($2, 'created_xid', 'SELECT')"
					   "        OR NOT pg_catalog.has_table_privilege($3, 'SELECT')"
					   "        OR NOT pg_catalog.has_table_privilege($4, 'SELECT')"
					   "      ELSE NOT pg_catalog.has_column_privilege($2, 'xmax', 'SELECT') END"
					   "   THEN 'denied'"
					   " ELSE 'ok' END",
					   5, params, "looking up okno_wait");
	if ((st = check_result(r, res, PGRES_TUPLES_OK, "looking up okno_wait")) != SQL_OK)
		return st;
	how = (PQntuples(res) == 1) ? PQgetvalue(res, 0, 0) : "missing";
	r->wait_mode = (strcmp(how, "ok") == 0) ? WAIT_SERVER : WAIT_LISTEN;
	if (r->wait_mode == WAIT_LISTEN && previous == WAIT_SERVER)
	{
		if (strcmp(how, "denied") == 0)
			relay_log("this role may not use okno_wait in schema \"%s\" (EXECUTE on it and %s: docs/PRIVILEGES.md): waiting with LISTEN " NOTIFY_CHANNEL " and polling instead",
					  schema, r->opts.subscriber != NULL ?
					  "SELECT on okno_delivery, okno_subscriber and outbox.created_xid" :
					  "SELECT (xmax) on outbox");
		else
			relay_log("okno in schema \"%s\" has no okno_wait (an older okno): waiting with LISTEN " NOTIFY_CHANNEL " and polling instead",
					  schema);
	}
	else if (r->wait_mode == WAIT_SERVER && previous == WAIT_LISTEN)
		relay_log("okno in schema \"%s\" has okno_wait now: waiting in the server", schema);
	PQclear(res);
	return SQL_OK;
}

/*
 * CALL okno_wait(ms): the timeout in ms is --poll, rounded, 1 at least (0
 * would not wait); 60 s without --poll, since a commit ends the wait
 * anyway and an idle relay should cost nothing.
 */
static void
build_wait_statement(Relay *r, const char *quoted)
{
	char	   *wait_args = subscriber_args(r, ", NULL, ");
	double		wait_ms = (r->opts.poll_set ? r->opts.poll : DEFAULT_SERVER_WAIT) * 1000.0;
	size_t		len;

	free(r->sql_wait);
	len = strlen(quoted) + strlen(wait_args) + 100;
	r->sql_wait = relay_malloc(len);
	snprintf(r->sql_wait, len, "CALL %s.okno_wait(%.0f%s)",
			 quoted, wait_ms < 1.0 ? 1.0 : wait_ms, wait_args);
	r->wait_seconds = (wait_ms < 1.0 ? 1.0 : wait_ms) / 1000.0;
	free(wait_args);
}
