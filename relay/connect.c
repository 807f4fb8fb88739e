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

/* room for open_connection's keywords (nine at most) and the NULL */
#define CONNECT_KEYWORDS 10

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

/* the connection's effective value of a connection option (NULL: none) */
static char *
conn_option(PGconn *c, const char *keyword)
{
	PQconninfoOption *opts = PQconninfo(c);
	PQconninfoOption *o;
	char	   *v = NULL;

	for (o = opts; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, keyword) == 0 && o->val != NULL)
			v = relay_strdup(o->val);
	PQconninfoFree(opts);
	return v;
}

/*
 * connect_timeout as libpq reads it: seconds, none when 0 or less (or
 * unset), 2 at least.
 */
static double
connect_timeout(PGconn *c)
{
	char	   *v = conn_option(c, "connect_timeout");
	long		t = v != NULL ? strtol(v, NULL, 10) : 0;

	free(v);
	if (t <= 0)
		return 0;
	return t < 2 ? 2.0 : (double) t;
}

/* several hosts (or host addresses) to try in turn */
static bool
several_hosts(PGconn *c)
{
	char	   *host = conn_option(c, "host");
	char	   *hostaddr = conn_option(c, "hostaddr");
	bool		several = (host != NULL && strchr(host, ',') != NULL) ||
		(hostaddr != NULL && strchr(hostaddr, ',') != NULL);

	free(host);
	free(hostaddr);
	return several;
}

/*
 * The connection's keywords and values (NULL-terminated, at most
 * CONNECT_KEYWORDS with the NULL), --dbname last.
 *
 * A later keyword wins: the same keyword in --dbname overrides ours.  Over
 * TCP, a server that stops answering without a reset (a primary that lost
 * power, a NAT or load balancer that forgot the flow) is noticed in about a
 * minute rather than the kernel's two hours: keepalives after 30 s idle,
 * then every 10 s, three unanswered end the connection, and so does data
 * unacknowledged for 60 s.  A connection attempt gives up after 30 s
 * (PGCONNECT_TIMEOUT wins).
 */
static void
connection_keywords(const Relay *r, const char **keywords, const char **values)
{
	int			n = 0;

	keywords[n] = "application_name";
	values[n++] = APPLICATION_NAME;
	keywords[n] = "client_encoding";
	values[n++] = "UTF8";
	keywords[n] = "keepalives";
	values[n++] = "1";
	keywords[n] = "keepalives_idle";
	values[n++] = "30";
	keywords[n] = "keepalives_interval";
	values[n++] = "10";
	keywords[n] = "keepalives_count";
	values[n++] = "3";
	keywords[n] = "tcp_user_timeout";
	values[n++] = "60000";
	if (getenv("PGCONNECT_TIMEOUT") == NULL)
	{
		keywords[n] = "connect_timeout";
		values[n++] = "30";
	}
	keywords[n] = "dbname";
	values[n++] = r->opts.dbname;
	keywords[n] = NULL;
	values[n] = NULL;
}

/*
 * Start connecting without blocking (PQconnectStartParams), or, with several
 * hosts, connect with libpq's blocking connect instead; *ps is where the
 * connection stands for PQconnectPoll (PGRES_POLLING_OK or _FAILED after the
 * blocking connect).  NULL when out of memory (message in errbuf).
 */
static PGconn *
start_connection(const char *const *keywords, const char *const *values,
				 PostgresPollingStatusType *ps, char *errbuf, size_t errlen)
{
	PGconn	   *c;

	c = PQconnectStartParams(keywords, values, 1);
	if (c == NULL)
	{
		snprintf(errbuf, errlen, "out of memory");
		return NULL;
	}
	if (PQstatus(c) != CONNECTION_BAD && several_hosts(c))
	{
		PQfinish(c);
		c = PQconnectdbParams(keywords, values, 1);
		if (c == NULL)
		{
			snprintf(errbuf, errlen, "out of memory");
			return NULL;
		}
		*ps = PQstatus(c) == CONNECTION_OK ? PGRES_POLLING_OK : PGRES_POLLING_FAILED;
	}
	return c;
}

/*
 * Drive PQconnectPoll until the connection is made or has failed (*ps
 * PGRES_POLLING_OK or _FAILED), the self-pipe in every poll(), for no
 * longer than connect_timeout (which libpq leaves to the caller of
 * PQconnectPoll).  False when a stop signal came or connect_timeout passed
 * (message in errbuf): the caller gives the connection up.
 */
static bool
poll_connection(PGconn *c, PostgresPollingStatusType *ps, char *errbuf, size_t errlen)
{
	double		timeout = connect_timeout(c);
	double		deadline = now_seconds() + timeout;

	while (*ps != PGRES_POLLING_OK && *ps != PGRES_POLLING_FAILED)
	{
		struct pollfd pfd[2];
		int			sock;
		int			rc;

		if (PQstatus(c) == CONNECTION_BAD)
		{
			*ps = PGRES_POLLING_FAILED;
			break;
		}
		if (stop_signal)
			return false;
		if (timeout > 0 && now_seconds() >= deadline)
		{
			snprintf(errbuf, errlen, "no answer from the server within connect_timeout (%g s)", timeout);
			return false;
		}
		sock = PQsocket(c);
		if (sock < 0)
		{
			*ps = PQconnectPoll(c);
			continue;
		}
		pfd[0].fd = sock;
		pfd[0].events = (*ps == PGRES_POLLING_READING) ? POLLIN : POLLOUT;
		pfd[0].revents = 0;
		pfd[1].fd = wakeup_fd();
		pfd[1].events = POLLIN;
		pfd[1].revents = 0;
		rc = poll(pfd, 2, timeout > 0 ? poll_timeout_ms(deadline - now_seconds()) : -1);
		if (rc < 0 && errno != EINTR)
			relay_fatal(EXIT_SERVER, "poll failed: %s", strerror(errno));
		drain_wakeups();
		if (rc > 0 && pfd[0].revents != 0)
			*ps = PQconnectPoll(c);
	}
	return true;
}

/*
 * Connect without blocking signals out: PQconnectStartParams and
 * PQconnectPoll, with the self-pipe in every poll(), for no longer than
 * connect_timeout (which libpq leaves to the caller of PQconnectPoll).
 * With several hosts, only libpq's own blocking connect moves on to the
 * next host when one does not answer in connect_timeout: that is used
 * instead, and a stop signal waits for it.  NULL on failure (message in
 * errbuf) or when a stop signal came.
 */
PGconn *
open_connection(Relay *r, char *errbuf, size_t errlen)
{
	const char *keywords[CONNECT_KEYWORDS];
	const char *values[CONNECT_KEYWORDS];
	PGconn	   *c;
	PostgresPollingStatusType ps = PGRES_POLLING_WRITING;

	connection_keywords(r, keywords, values);

	errbuf[0] = '\0';
	c = start_connection(keywords, values, &ps, errbuf, errlen);
	if (c == NULL)
		return NULL;
	if (!poll_connection(c, &ps, errbuf, errlen))
	{
		PQfinish(c);
		return NULL;
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
 * 5 s) until it works or a stop signal comes.  A connection lost again
 * before a drain worked (a server that keeps ending it, a read-only one)
 * is first followed by a pause, 0.1 s doubling to 5 s, so that the relay
 * never spins.
 */
void
reconnect(Relay *r)
{
	double		delay = BACKOFF_MIN;
	char		errbuf[1024];
	int			i;

	if (r->conn != NULL)
	{
		PQfinish(r->conn);
		r->conn = NULL;
	}
	if (r->pace.lost_streak > 0)
	{
		double		pause = BACKOFF_MIN;

		for (i = 1; i < r->pace.lost_streak && pause < BACKOFF_MAX; i++)
			pause *= 2;
		sleep_interruptible(pause < BACKOFF_MAX ? pause : BACKOFF_MAX);
	}
	r->pace.lost_streak++;
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
	double		delay = BACKOFF_MIN;
	int			attempt;

	r->conn = open_connection(r, errbuf, sizeof(errbuf));
	if (r->conn == NULL)
	{
		if (stop_signal)
			exit(EXIT_DONE);
		relay_fatal(EXIT_NO_CONNECTION, "cannot connect to the database: %s", errbuf);
	}
	st = setup_session(r);
	/* a transient error (a cancel, a serialization failure ...): again, a few times */
	for (attempt = 1; st == SQL_RETRY && attempt < START_ATTEMPTS && !stop_signal; attempt++)
	{
		sleep_interruptible(delay);
		delay *= 2;
		st = setup_session(r);
	}
	if (stop_signal)
		exit(EXIT_DONE);
	if (st == SQL_LOST)
		relay_fatal(EXIT_NO_CONNECTION, "lost the connection to the database at start");
	if (st == SQL_RETRY)
		relay_fatal(EXIT_SERVER, "cannot set up the session: gave up after %d attempts", START_ATTEMPTS);
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
	else if (st == SQL_RETRY || st == SQL_UNREADABLE)
	{
		sleep_interruptible(r->pace.retry_delay);
		r->pace.retry_delay *= 2;
		if (r->pace.retry_delay > BACKOFF_MAX)
			r->pace.retry_delay = BACKOFF_MAX;
	}
}
