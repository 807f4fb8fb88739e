/*-------------------------------------------------------------------------
 *
 * connect.c
 *	  Connecting, reconnecting, and backing off.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/connect.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relay.h"

static const char *const wait_mode_names[] = {"server", "listen", "poll"};

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

/*
 * The first connection: one attempt, since a relay that cannot connect at
 * its start is misconfigured (exit 2); a stop signal meanwhile exits 0.
 */
void
connect_at_start(Relay *r)
{
	char		errbuf[1024];
	SqlStatus	st;

	r->conn = open_connection(r, errbuf, sizeof(errbuf));
	if (r->conn == NULL)
	{
		if (stop_signal)
			exit(EXIT_DONE);
		relay_fatal(EXIT_NO_CONNECTION, "cannot connect to the database: %s", errbuf);
	}
	st = setup_session(r);
	if (st == SQL_LOST)
		relay_fatal(EXIT_NO_CONNECTION, "lost the connection to the database at start");
	if (st == SQL_RETRY)
		relay_fatal(EXIT_SERVER, "cannot set up the session");
	if (r->opts.verbose)
	{
		if (r->opts.exec_command != NULL)
			relay_log("connected to database \"%s\", running --exec per event, one event per transaction, %d in a row",
					  PQdb(r->conn), r->opts.batch);
		else
			relay_log("connected to database \"%s\", batches of %d, JSON lines on stdout",
					  PQdb(r->conn), r->opts.batch);
		if (!r->opts.once)
			relay_log("waiting between batches: %s", wait_mode_names[r->wait_mode]);
	}
}

/*
 * A statement went wrong: SQL_LOST connects again (and forgets what the
 * last okno_wait said); SQL_RETRY backs off, 0.1 s doubling to 5 s, until
 * a drain works again (main resets the delay).
 */
void
recover(Relay *r, SqlStatus st)
{
	if (st == SQL_LOST)
	{
		reconnect(r);
		r->pace.woken = false;
	}
	else if (st == SQL_RETRY)
	{
		sleep_interruptible(r->pace.retry_delay);
		r->pace.retry_delay *= 2;
		if (r->pace.retry_delay > BACKOFF_MAX)
			r->pace.retry_delay = BACKOFF_MAX;
	}
}
