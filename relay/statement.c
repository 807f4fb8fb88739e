/*-------------------------------------------------------------------------
 *
 * statement.c
 *	  Running one statement with a deadline.
 *
 * A server that stops answering without closing the connection (a primary
 * that lost power, a NAT or load balancer that forgot the flow, a stopped
 * backend) would keep a blocking PQexec waiting until TCP notices, hours
 * with the kernel's defaults.  So every statement is sent without
 * blocking and its answer awaited with poll(), on the socket and the
 * self-pipe, for --statement-timeout seconds (60 by default; okno_wait:
 * its own timeout plus WAIT_GRACE, wait.c); past it the relay asks the
 * server to cancel it, and if no answer comes within CANCEL_GRACE either,
 * takes the connection for lost: the caller reconnects.  A stop signal lets the
 * statement finish, but waits for it no longer than CANCEL_GRACE.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/statement.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "relay.h"

/*
 * Ask the server to cancel the statement in progress; said when it cannot
 * be asked.
 */
void
send_cancel(Relay *r, const char *what)
{
	PGcancel   *cancel = PQgetCancel(r->conn);
	char		errbuf[256];

	if (cancel == NULL)
		return;
	if (!PQcancel(cancel, errbuf, sizeof(errbuf)))
		relay_log("could not cancel %s: %s", what, one_line(errbuf));
	PQfreeCancel(cancel);
}

/*
 * One poll() on the server's socket and the self-pipe, for timeout_ms (-1:
 * no limit); false (logged) if the connection has no socket any more.
 */
bool
poll_server(Relay *r, const char *what, int timeout_ms)
{
	struct pollfd pfd[2];

	pfd[0].fd = PQsocket(r->conn);
	if (pfd[0].fd < 0)
	{
		relay_log("lost the connection to the server (%s): no socket", what);
		return false;
	}
	pfd[0].events = POLLIN;
	pfd[0].revents = 0;
	pfd[1].fd = wakeup_fd();
	pfd[1].events = POLLIN;
	pfd[1].revents = 0;
	if (poll(pfd, 2, timeout_ms) < 0 && errno != EINTR)
		relay_fatal(EXIT_SERVER, "poll failed: %s", strerror(errno));
	drain_wakeups();
	reap_orphans();
	return true;
}

/*
 * Wait for the answer to the statement sent on r->conn: true when it came
 * (PQisBusy is false), false when the connection broke or the server did
 * not answer in time (logged: the caller takes the connection for lost).
 * timeout: seconds until the relay cancels the statement; cancel_on_stop:
 * a stop signal cancels it at once (okno_wait) rather than letting it end.
 */
bool
await_answer(Relay *r, const char *what, double timeout, bool cancel_on_stop)
{
	double		deadline = now_seconds() + timeout;
	double		give_up = 0;	/* 0: no cancel sent yet */
	bool		stopped = false;

	for (;;)
	{
		double		now;
		double		until;

		if (!PQconsumeInput(r->conn))
			return true;		/* the caller reads the error */
		if (!PQisBusy(r->conn))
			return true;

		now = now_seconds();
		if (stop_signal && !stopped)
		{
			stopped = true;
			if (cancel_on_stop && give_up == 0)
			{
				send_cancel(r, what);
				give_up = now + CANCEL_GRACE;
			}
			else if (give_up == 0 || now + CANCEL_GRACE < give_up)
				give_up = now + CANCEL_GRACE;
		}
		if (give_up == 0 && now >= deadline)
		{
			relay_log("%s got no answer within %g s: cancelling it", what, timeout);
			send_cancel(r, what);
			give_up = now + CANCEL_GRACE;
		}
		if (give_up != 0 && now >= give_up)
		{
			relay_log("lost the connection to the server (%s): no answer within %g s%s",
					  what, CANCEL_GRACE, stopped ? " of the stop signal" : " of the cancel");
			return false;
		}

		until = (give_up != 0) ? give_up : deadline;
		if (r->opts.metrics_file != NULL && until - now > METRICS_INTERVAL)
		{
			metrics_maybe_write(r);
			until = now + METRICS_INTERVAL;
		}
		if (!poll_server(r, what, poll_timeout_ms(until - now)))
			return false;
	}
}

/*
 * The statement's result as PQexec would give it: the last one, or the
 * error that ended a string of statements.  NULL when the connection is
 * lost (or was taken for lost: no answer in time).  With nparams > 0 the
 * extended protocol (one statement), otherwise the simple one.
 */
PGresult *
run_statement(Relay *r, const char *sql, int nparams, const char *const *params,
			  const char *what)
{
	PGresult   *last = NULL;
	PGresult   *res;
	int			sent;

	if (nparams > 0)
		sent = PQsendQueryParams(r->conn, sql, nparams, NULL, params, NULL, NULL, 0);
	else
		sent = PQsendQuery(r->conn, sql);
	if (!sent)
		return NULL;
	if (!await_answer(r, what, r->opts.statement_timeout, false))
		return NULL;			/* (check_result: a lost connection) */
	while ((res = PQgetResult(r->conn)) != NULL)
	{
		if (last != NULL && PQresultStatus(last) == PGRES_FATAL_ERROR)
		{
			PQclear(res);		/* the error ended the string: keep it */
			continue;
		}
		PQclear(last);
		last = res;
	}
	return last;
}
