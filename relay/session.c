/*-------------------------------------------------------------------------
 *
 * session.c
 *	  Connecting, the session's set-up, reconnecting, and judging results.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/session.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relay.h"

/*
 * Server messages outside a query: notices, warnings, and the FATAL a
 * backend sends before it closes the connection (pg_terminate_backend,
 * shutdown).  The last means the open transaction is lost already.
 */
static void
notice_receiver(void *arg, const PGresult *res)
{
	Relay	   *r = arg;
	const char *severity = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);

	if (severity != NULL &&
		(strcmp(severity, "FATAL") == 0 || strcmp(severity, "PANIC") == 0))
		r->server_closing = true;
	relay_log("server: %s", one_line(PQresultErrorMessage(res)));
}

/*
 * Connect without blocking signals out: PQconnectStartParams and
 * PQconnectPoll, with the self-pipe in every poll().  NULL on failure
 * (message in errbuf) or when a stop signal came.
 */
PGconn *
open_connection(Relay *r, char *errbuf, size_t errlen)
{
	const char *keywords[4];
	const char *values[4];
	PGconn	   *c;
	PostgresPollingStatusType ps = PGRES_POLLING_WRITING;

	/* a later keyword wins: application_name in --dbname overrides ours */
	keywords[0] = "application_name";
	values[0] = APPLICATION_NAME;
	keywords[1] = "client_encoding";
	values[1] = "UTF8";
	keywords[2] = "dbname";
	values[2] = r->opts.dbname;
	keywords[3] = NULL;
	values[3] = NULL;

	errbuf[0] = '\0';
	c = PQconnectStartParams(keywords, values, 1);
	if (c == NULL)
	{
		snprintf(errbuf, errlen, "out of memory");
		return NULL;
	}
	while (ps != PGRES_POLLING_OK && ps != PGRES_POLLING_FAILED)
	{
		struct pollfd pfd[2];
		int			sock;
		int			rc;

		if (PQstatus(c) == CONNECTION_BAD)
		{
			ps = PGRES_POLLING_FAILED;
			break;
		}
		if (stop_signal)
		{
			PQfinish(c);
			return NULL;
		}
		sock = PQsocket(c);
		if (sock < 0)
		{
			ps = PQconnectPoll(c);
			continue;
		}
		pfd[0].fd = sock;
		pfd[0].events = (ps == PGRES_POLLING_READING) ? POLLIN : POLLOUT;
		pfd[0].revents = 0;
		pfd[1].fd = wakeup_fd();
		pfd[1].events = POLLIN;
		pfd[1].revents = 0;
		rc = poll(pfd, 2, -1);
		if (rc < 0 && errno != EINTR)
			relay_fatal(EXIT_SERVER, "poll failed: %s", strerror(errno));
		drain_wakeups();
		if (rc > 0 && pfd[0].revents != 0)
			ps = PQconnectPoll(c);
	}
	if (ps == PGRES_POLLING_FAILED || PQstatus(c) != CONNECTION_OK)
	{
		snprintf(errbuf, errlen, "%s", one_line(PQerrorMessage(c)));
		PQfinish(c);
		return NULL;
	}
	r->server_closing = false;
	PQsetNoticeReceiver(c, notice_receiver, r);
	return c;
}

/*
 * Judge a result; frees it unless it is SQL_OK.  A lost connection and a
 * transient error (serialization failure, deadlock, cancel, read-only,
 * out of resources) are the caller's to handle; anything else is fatal
 * (exit 3).
 */
SqlStatus
check_result(Relay *r, PGresult *res, ExecStatusType want, const char *what)
{
	const char *state;
	const char *msg;
	char		buf[1100];

	if (res != NULL && PQresultStatus(res) == want)
		return SQL_OK;

	state = (res != NULL) ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	msg = (res != NULL) ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	if (msg == NULL && res != NULL && PQresultErrorMessage(res)[0] != '\0')
		msg = PQresultErrorMessage(res);
	if (msg == NULL)
		msg = PQerrorMessage(r->conn);
	snprintf(buf, sizeof(buf), "%s", one_line(msg));

	if (PQstatus(r->conn) == CONNECTION_BAD ||
		(state == NULL && (res == NULL || PQresultStatus(res) == PGRES_FATAL_ERROR)) ||
		(state != NULL && (strncmp(state, "08", 2) == 0 || strncmp(state, "57P0", 4) == 0)))
	{
		relay_log("lost the connection to the server (%s): %s", what, buf);
		PQclear(res);
		return SQL_LOST;
	}
	if (state != NULL &&
		(strncmp(state, "40", 2) == 0 ||	/* serialization, deadlock */
		 strncmp(state, "53", 2) == 0 ||	/* insufficient resources */
		 strcmp(state, "57014") == 0 || /* query canceled */
		 strcmp(state, "55P03") == 0 || /* lock not available */
		 strcmp(state, "25006") == 0))	/* read-only transaction */
	{
		relay_log("%s failed, will retry: %s (SQLSTATE %s)", what, buf, state);
		PQclear(res);
		return SQL_RETRY;
	}
	if (state != NULL)
		relay_log("%s failed: %s (SQLSTATE %s)", what, buf, state);
	else if (res != NULL && PQresultStatus(res) != PGRES_FATAL_ERROR)
		relay_log("%s: unexpected result %s", what, PQresStatus(PQresultStatus(res)));
	else
		relay_log("%s failed: %s", what, buf);
	PQclear(res);
	PQfinish(r->conn);
	r->conn = NULL;
	exit(EXIT_SERVER);
}

/*
 * On a fresh connection: find okno's schema, check that it has the 0.2.0
 * functions, build the qualified statements, and get ready to
 * wait: with --wait=server, if okno has okno_wait; otherwise (and with
 * --wait=listen) LISTEN.  Missing okno is fatal (exit 3).
 */
SqlStatus
setup_session(Relay *r)
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
	char	   *schema;
	char	   *quoted;
	char	   *subscriber = NULL;	/* ", 'name'" or "" */
	char	   *wait_args;		/* ", NULL, 'name'" or "" */
	char		signature[600];
	const char *param[1];
	size_t		len;
	int			i;

	/*
	 * The session is left as it is: no SET, no session setting, no
	 * session lock, no prepared statement, no LISTEN but with
	 * --wait=listen.  Through a pooler in transaction mode (PgBouncer's
	 * pool_mode = transaction) the server session is lent to other clients
	 * between our transactions, and a session setting would stay with it:
	 * set_config('search_path', 'pg_catalog', false) here made every
	 * client's unqualified okno_create_booking() fail on the connections
	 * the relay had used.  So every statement names the schema of every
	 * function, operator and type it uses (pg_catalog's included), and the
	 * delivery transactions pin search_path with SET LOCAL, which ends with
	 * them (sql_drain).  application_name and client_encoding are startup
	 * parameters, which a pooler tracks per client.
	 */
	if (r->opts.schema != NULL)
		schema = relay_strdup(r->opts.schema);
	else
	{
		res = PQexec(r->conn,
					 "SELECT n.nspname FROM pg_catalog.pg_extension e"
					 " JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace"
					 " WHERE e.extname OPERATOR(pg_catalog.=) 'okno'");
		if ((st = check_result(r, res, PGRES_TUPLES_OK, "looking up okno's schema")) != SQL_OK)
			return st;
		if (PQntuples(res) != 1)
		{
			PQclear(res);
			relay_fatal(EXIT_SERVER, "okno is not installed in database \"%s\" (CREATE EXTENSION okno CASCADE)",
						PQdb(r->conn));
		}
		schema = relay_strdup(PQgetvalue(res, 0, 0));
		PQclear(res);
	}

	quoted = PQescapeIdentifier(r->conn, schema, strlen(schema));
	if (quoted == NULL)
		relay_fatal(EXIT_SERVER, "could not quote schema name \"%s\": %s",
					schema, one_line(PQerrorMessage(r->conn)));

	/* okno 0.2.0's functions (0.5.0's for a subscriber), in that schema */
	for (i = 0; i < (int) (sizeof(functions) / sizeof(functions[0])); i++)
	{
		snprintf(signature, sizeof(signature), "%s.%s", quoted,
				 r->opts.subscriber != NULL ? subscriber_signatures[i] : signatures[i]);
		param[0] = signature;
		res = PQexecParams(r->conn, "SELECT pg_catalog.to_regprocedure($1) IS NOT NULL",
						   1, NULL, param, NULL, NULL, 0);
		if ((st = check_result(r, res, PGRES_TUPLES_OK, "looking up okno's functions")) != SQL_OK)
		{
			PQfreemem(quoted);
			free(schema);
			return st;
		}
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

	/* the subscriber's name as a literal argument (the server checks it) */
	if (r->opts.subscriber != NULL)
	{
		char	   *literal = PQescapeLiteral(r->conn, r->opts.subscriber, strlen(r->opts.subscriber));

		if (literal == NULL)
			relay_fatal(EXIT_SERVER, "could not quote subscriber name \"%s\": %s",
						r->opts.subscriber, one_line(PQerrorMessage(r->conn)));
		subscriber = relay_malloc(strlen(literal) + 3);
		sprintf(subscriber, ", %s", literal);
		wait_args = relay_malloc(strlen(literal) + 9);
		sprintf(wait_args, ", NULL, %s", literal);
		PQfreemem(literal);
	}
	else
	{
		subscriber = relay_strdup("");
		wait_args = relay_strdup("");
	}

	free(r->sql_drain);
	free(r->sql_record_failure);
	free(r->sql_release);
	len = strlen(quoted) + strlen(subscriber) + 250;
	r->sql_drain = relay_malloc(len);
	snprintf(r->sql_drain, len,
			 "BEGIN; SET LOCAL search_path = pg_catalog;"
			 " SELECT event_id, kind, payload, attempts FROM %s.okno_drain(%d%s)",
			 quoted, r->opts.exec_command != NULL ? 1 : r->opts.batch, subscriber);
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

	/* --once never waits */
	if (r->opts.once)
	{
		free(wait_args);
		PQfreemem(quoted);
		free(schema);
		return SQL_OK;
	}

	if (r->opts.wait == WAIT_SERVER)
	{
		WaitMode	previous = r->wait_mode;
		char		outbox[600];
		char		delivery[600];
		char		subscribers[600];
		const char *params[5];
		const char *how;

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
		res = PQexecParams(r->conn,
						   "SELECT CASE WHEN pg_catalog.to_regprocedure($1) IS NULL THEN 'missing'"
						   " WHEN NOT pg_catalog.has_function_privilege(pg_catalog.to_regprocedure($1), 'EXECUTE')"
						   "   OR CASE WHEN $5::pg_catalog.bool"
						   "      THEN NOT pg_catalog.has_column_privilege($2, 'created_xid', 'SELECT')"
						   "        OR NOT pg_catalog.has_table_privilege($3, 'SELECT')"
						   "        OR NOT pg_catalog.has_table_privilege($4, 'SELECT')"
						   "      ELSE NOT pg_catalog.has_column_privilege($2, 'xmax', 'SELECT') END"
						   "   THEN 'denied'"
						   " ELSE 'ok' END",
						   5, NULL, params, NULL, NULL, 0);
		if ((st = check_result(r, res, PGRES_TUPLES_OK, "looking up okno_wait")) != SQL_OK)
		{
			free(wait_args);
			PQfreemem(quoted);
			free(schema);
			return st;
		}
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
	}

	/*
	 * The timeout in ms: --poll, rounded, 1 at least (0 would not wait); 60 s
	 * without --poll, since a commit ends the wait anyway and an idle relay
	 * should cost nothing.
	 */
	free(r->sql_wait);
	len = strlen(quoted) + strlen(wait_args) + 100;
	r->sql_wait = relay_malloc(len);
	{
		double		wait_ms = (r->opts.poll_set ? r->opts.poll : DEFAULT_SERVER_WAIT) * 1000.0;

		snprintf(r->sql_wait, len, "CALL %s.okno_wait(%.0f%s)",
				 quoted, wait_ms < 1.0 ? 1.0 : wait_ms, wait_args);
	}
	free(wait_args);
	PQfreemem(quoted);
	free(schema);

	if (r->wait_mode != WAIT_LISTEN)
		return SQL_OK;
	res = PQexec(r->conn, "LISTEN " NOTIFY_CHANNEL);
	return check_result(r, res, PGRES_COMMAND_OK, "LISTEN");
}

/*
 * The connection is gone: connect again with backoff (0.1 s doubling to
 * 5 s) until it works or a stop signal comes.
 */
void
reconnect(Relay *r)
{
	double		delay = BACKOFF_MIN;
	char		errbuf[1024];

	if (r->conn != NULL)
	{
		PQfinish(r->conn);
		r->conn = NULL;
	}
	relay_log("reconnecting");
	for (;;)
	{
		if (stop_signal)
			return;
		r->conn = open_connection(r, errbuf, sizeof(errbuf));
		if (r->conn != NULL)
		{
			SqlStatus	st = setup_session(r);

			if (st == SQL_OK)
			{
				relay_log("reconnected");
				r->metrics.reconnects++;
				return;
			}
			PQfinish(r->conn);
			r->conn = NULL;
			snprintf(errbuf, sizeof(errbuf), "the new connection did not last");
		}
		if (stop_signal)
			return;
		relay_log("could not reconnect: %s; next attempt in %.1f s", errbuf, delay);
		sleep_interruptible(delay);
		delay *= 2;
		if (delay > BACKOFF_MAX)
			delay = BACKOFF_MAX;
	}
}
