/*-------------------------------------------------------------------------
 *
 * wait.c
 *	  Waiting between batches: okno_wait in the server, or LISTEN and polling.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/wait.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "relay.h"

/*
 * Consume the notifications libpq has; the number that came from other
 * sessions (our own commits wake nobody: what they change is known).
 */
static int
take_notifications(Relay *r)
{
	PGnotify   *n;
	int			count = 0;
	int			self = PQbackendPID(r->conn);

	while ((n = PQnotifies(r->conn)) != NULL)
	{
		if (n->be_pid != self)
			count++;
		PQfreemem(n);
	}
	return count;
}

/*
 * Remember when an event we saw fail comes due again, so that the retry
 * does not wait for --poll.
 */
void
add_retry_time(Relay *r, double when)
{
	if (r->retry_times == NULL)
		r->retry_times = relay_malloc(sizeof(double) * MAX_RETRY_TIMES);
	if (r->n_retry_times < MAX_RETRY_TIMES)
		r->retry_times[r->n_retry_times++] = when;
}

/*
 * Idle: wait for a notification from another session, for the retry time
 * of an event we saw fail, for the given number of seconds, or for a stop
 * signal.  False if the connection was lost.
 */
bool
wait_for_work(Relay *r, double seconds)
{
	double		deadline = now_seconds() + seconds;

	for (;;)
	{
		double		now;
		double		until = deadline;
		bool		due = false;
		int			i;

		if (stop_signal)
			return true;
		if (!PQconsumeInput(r->conn) || PQstatus(r->conn) == CONNECTION_BAD ||
			r->server_closing)
		{
			relay_log("lost the connection to the server (waiting): %s",
					  r->server_closing ? "the server closed the session" :
					  one_line(PQerrorMessage(r->conn)));
			return false;
		}
		if (take_notifications(r) > 0)
			return true;

		now = now_seconds();
		for (i = 0; i < r->n_retry_times;)
		{
			if (r->retry_times[i] <= now)
			{
				r->retry_times[i] = r->retry_times[--r->n_retry_times];
				due = true;
			}
			else
			{
				if (r->retry_times[i] < until)
					until = r->retry_times[i];
				i++;
			}
		}
		if (due || now >= until)
			return true;

		progress_report(r, false);
		metrics_maybe_write(r);
		if (r->opts.metrics_file != NULL && until - now > METRICS_INTERVAL)
			until = now + METRICS_INTERVAL; /* then look again */
		if (!poll_server(r, "waiting", poll_timeout_ms(until - now)))
			return false;
	}
}

/*
 * --wait=server, idle: CALL okno_wait(--poll in ms), sent with
 * PQsendQuery, and poll() on the connection and the self-pipe until it
 * returns.  *woken is okno_wait's answer: an event may be due (a commit
 * wrote one, a delayed one came due, it was due already); false at its
 * timeout.  The server ends the wait at lock_timeout (55P03) or
 * statement_timeout (57014) if one is shorter: a timeout too.  A stop
 * signal cancels it; the relay waits up to CANCEL_GRACE seconds for the
 * answer.  A server that has not answered WAIT_GRACE seconds after the
 * wait's own timeout is asked to cancel it, and after CANCEL_GRACE more
 * the connection is taken for lost (statement.c).  Other errors go through
 * check_result (a lost connection: SQL_LOST, ...).
 */
SqlStatus
wait_in_server(Relay *r, bool *woken)
{
	PGresult   *res;
	PGresult   *first = NULL;
	const char *state;
	SqlStatus	st;

	*woken = false;
	if (stop_signal)
		return SQL_OK;
	if (!PQsendQuery(r->conn, r->sql_wait))
		return check_result(r, NULL, PGRES_TUPLES_OK, "okno_wait");
	/* its own timeout and a grace for the server; a stop signal cancels it */
	if (!await_answer(r, "okno_wait", r->wait_seconds + WAIT_GRACE, true))
		return SQL_LOST;

	/* the CALL's result, then the end of the query (NULL) */
	while ((res = PQgetResult(r->conn)) != NULL)
	{
		if (first == NULL)
			first = res;
		else
			PQclear(res);
	}

	state = (first != NULL) ? PQresultErrorField(first, PG_DIAG_SQLSTATE) : NULL;
	if (first != NULL && PQresultStatus(first) == PGRES_FATAL_ERROR && state != NULL &&
		PQstatus(r->conn) == CONNECTION_OK &&
		(strcmp(state, "55P03") == 0 || strcmp(state, "57014") == 0))
	{
		/* lock_timeout, statement_timeout, our cancel or someone's: a timeout */
		if (!stop_signal && r->opts.verbose && !r->wait_timeout_logged)
		{
			relay_log("okno_wait ended early (%s, SQLSTATE %s): taken for a timeout",
					  one_line(PQresultErrorField(first, PG_DIAG_MESSAGE_PRIMARY)), state);
			r->wait_timeout_logged = true;
		}
		PQclear(first);
		return SQL_OK;
	}
	if ((st = check_result(r, first, PGRES_TUPLES_OK, "okno_wait")) != SQL_OK)
		return st;
	*woken = (PQntuples(first) == 1 && PQnfields(first) >= 1 &&
			  strcmp(PQgetvalue(first, 0, 0), "t") == 0);
	PQclear(first);
	return SQL_OK;
}

/*
 * Between batches, after a drain that did not fill a batch: wait the
 * chosen way (--wait, as setup_session settled it).  A lost connection is
 * re-established here.
 */
void
wait_between_batches(Relay *r, int drained)
{
	RelayPace  *pace = &r->pace;
	SqlStatus	st;

	if (r->wait_mode != WAIT_SERVER)
	{
		/*
		 * Without notifications (okno.notify is off by default), look again
		 * soon after a drain that found events, and back off while there
		 * are none: 10 ms, doubling after every empty drain, up to --poll.
		 */
		if (drained > 0)
			pace->idle_wait = POLL_FIRST;
		else if (pace->idle_wait < r->opts.poll)
			pace->idle_wait *= 2;
		if (!wait_for_work(r, pace->idle_wait < r->opts.poll ? pace->idle_wait : r->opts.poll))
			reconnect(r);
		return;
	}

	/*
	 * In the server: okno_wait returns at once if more are due.  A wake can
	 * still find nothing to drain (another relay took the event first):
	 * when it does, pause before the next wait, 10 ms doubling up to 1 s
	 * (or --poll, if shorter), so that relays racing each other do not
	 * spin.  An event written during the pause is found when okno_wait
	 * begins.
	 */
	if (drained > 0 || !pace->woken)
		pace->empty_wakes = 0;
	else if (pace->empty_wakes < 30)
		pace->empty_wakes++;

	/*
	 * After a drain that found events, let those of the next 10 ms gather
	 * and drain again, as polling does: woken by every commit, a relay
	 * under load would run a delivery transaction for every few creates
	 * and take the CPU the writers need.  Only a drain that found nothing
	 * is followed by okno_wait, so an idle relay is woken at once by the
	 * next commit.
	 */
	if (drained > 0)
	{
		sleep_interruptible(POLL_FIRST);
		pace->woken = false;	/* the next drain follows a pause, not a wake */
		return;
	}
	if (pace->empty_wakes > 0)
	{
		double		pause = POLL_FIRST;
		double		most = (r->opts.poll < EMPTY_WAKE_PAUSE_MAX) ? r->opts.poll : EMPTY_WAKE_PAUSE_MAX;
		int			i;

		for (i = 1; i < pace->empty_wakes && pause < most; i++)
			pause *= 2;
		sleep_interruptible(pause < most ? pause : most);
		if (stop_signal)
			return;
	}
	st = wait_in_server(r, &pace->woken);
	if (st != SQL_OK)
		recover(r, st);
}
