/*-------------------------------------------------------------------------
 *
 * batch.c
 *	  The delivery transaction: drain, deliver, record failures, release,
 *	  commit.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/batch.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relay.h"

/*
 * okno_record_failure(event, why) in the delivery transaction; remember
 * when the event is due again.
 */
static SqlStatus
record_failure(Relay *r, const RelayEvent *ev, const char *why)
{
	const char *params[2];
	PGresult   *res;
	SqlStatus	st;

	params[0] = ev->id;
	params[1] = why;
	res = PQexecParams(r->conn, r->sql_record_failure, 2, NULL, params, NULL, NULL, 0);
	if ((st = check_result(r, res, PGRES_TUPLES_OK, "okno_record_failure")) != SQL_OK)
		return st;
	if (PQntuples(res) != 1)
	{
		PQclear(res);
		relay_fatal(EXIT_SERVER, "okno_record_failure returned no row for event %s", ev->id);
	}
	r->metrics.in_flight.failed++;
	if (strcmp(PQgetvalue(res, 0, 1), "t") == 0)
	{
		r->metrics.in_flight.parked++;
		relay_log("event %s failed (%s): parked after %s attempts",
				  ev->id, why, PQgetvalue(res, 0, 0));
	}
	else if (PQgetisnull(res, 0, 2))
		relay_log("event %s failed (%s): attempt %s",
				  ev->id, why, PQgetvalue(res, 0, 0));
	else
	{
		double		delay = strtod(PQgetvalue(res, 0, 2), NULL);

		relay_log("event %s failed (%s): attempt %s, next in %.1f s",
				  ev->id, why, PQgetvalue(res, 0, 0), delay > 0 ? delay : 0.0);
		/* okno_wait knows when it is due; LISTEN and polling do not */
		if (!r->opts.once && r->wait_mode != WAIT_SERVER)
			add_retry_time(r, now_seconds() + (delay > 0 ? delay : 0.0));
	}
	PQclear(res);
	return SQL_OK;
}

/*
 * Hand events from..to-1 of the drain back with okno_release(), in one
 * statement.
 */
static SqlStatus
release_events(Relay *r, PGresult *drain, int from, int to)
{
	LineBuffer	arr = {NULL, 0, 0};
	const char *params[1];
	PGresult   *res;
	SqlStatus	st;
	int			i;
	long		released;

	buf_append(&arr, "{", 1);
	for (i = from; i < to; i++)
	{
		if (i > from)
			buf_append(&arr, ",", 1);
		buf_append(&arr, PQgetvalue(drain, i, 0), strlen(PQgetvalue(drain, i, 0)));
	}
	buf_append(&arr, "}", 1);
	params[0] = arr.data;
	res = PQexecParams(r->conn, r->sql_release, 1, NULL, params, NULL, NULL, 0);
	free(arr.data);
	if ((st = check_result(r, res, PGRES_TUPLES_OK, "okno_release")) != SQL_OK)
		return st;
	released = (PQntuples(res) == 1) ? strtol(PQgetvalue(res, 0, 0), NULL, 10) : -1;
	if (released > 0)
		r->metrics.in_flight.released += released;
	if (released != to - from)
		relay_log("okno_release handed back %ld of %d events", released, to - from);
	else if (r->opts.verbose)
		relay_log("handed back %d undelivered events of the batch", to - from);
	PQclear(res);
	return SQL_OK;
}

/* after a failed statement inside the delivery transaction */
static SqlStatus
abandon_transaction(Relay *r, SqlStatus st)
{
	PGresult   *res;

	if (st == SQL_RETRY)
	{
		res = PQexec(r->conn, "ROLLBACK");
		if (check_result(r, res, PGRES_COMMAND_OK, "ROLLBACK") != SQL_OK)
			return SQL_LOST;
		PQclear(res);
	}
	return st;
}

/*
 * BEGIN; okno_drain(n), in one round trip: n is --batch on stdout and 1
 * with --exec.  On SQL_OK the delivery transaction is open and *drain
 * holds its events; otherwise no transaction is open.
 */
static SqlStatus
begin_and_drain(Relay *r, PGresult **drain)
{
	PGresult   *res;
	SqlStatus	st;

	/*
	 * PQexec returns the last statement's result, or the error that ended
	 * the string; the transaction that BEGIN opened stays open after it.
	 * After an error in either statement a ROLLBACK is right (outside a
	 * transaction it only warns).
	 */
	*drain = NULL;
	memset(&r->metrics.in_flight, 0, sizeof(r->metrics.in_flight));
	res = PQexec(r->conn, r->sql_drain);
	if ((st = check_result(r, res, PGRES_TUPLES_OK, "okno_drain")) != SQL_OK)
		return abandon_transaction(r, st);
	if (PQnfields(res) != 4)
	{
		int			nfields = PQnfields(res);

		PQclear(res);
		relay_fatal(EXIT_SERVER, "okno_drain returned %d columns, 4 expected", nfields);
	}
	r->metrics.in_flight.events = PQntuples(res);
	*drain = res;
	return SQL_OK;
}

/* COMMIT the delivery transaction */
static SqlStatus
commit_transaction(Relay *r)
{
	PGresult   *res;
	SqlStatus	st;

	res = PQexec(r->conn, "COMMIT");
	if ((st = check_result(r, res, PGRES_COMMAND_OK, "COMMIT")) != SQL_OK)
		return st;
	if (strcmp(PQcmdStatus(res), "COMMIT") != 0)
	{
		relay_log("the delivery transaction did not commit (%s)", PQcmdStatus(res));
		PQclear(res);
		return SQL_RETRY;
	}
	PQclear(res);
	commit_counts(r);
	return SQL_OK;
}

/*
 * Hand event i of the drain to the recipient and settle the outcome in the
 * open delivery transaction: a delivery is counted, a failure recorded
 * with okno_record_failure().  *not_tried is set when the relay could not
 * hand the event over at all (the caller releases it).  A write error on
 * standard output rolls the transaction back and ends the relay (exit 4).
 */
static SqlStatus
deliver_event(Relay *r, PGresult *drain, int i, bool *not_tried)
{
	RelayEvent	ev;
	DeliveryOutcome outcome;
	PGresult   *res;
	SqlStatus	st;
	char		why[512];

	*not_tried = false;
	if (PQgetisnull(drain, i, 0))
	{
		PQclear(drain);
		relay_fatal(EXIT_SERVER, "okno_drain returned an event without an id");
	}
	ev.id = PQgetvalue(drain, i, 0);
	ev.kind = PQgetisnull(drain, i, 1) ? NULL : PQgetvalue(drain, i, 1);
	ev.payload = PQgetisnull(drain, i, 2) ? NULL : PQgetvalue(drain, i, 2);
	ev.attempts = PQgetisnull(drain, i, 3) ? NULL : PQgetvalue(drain, i, 3);
	build_line(&r->line, &ev);

	why[0] = '\0';
	if (r->opts.exec_command != NULL)
		outcome = deliver_exec(r, &ev, &r->line, why, sizeof(why));
	else
		outcome = deliver_stdout(&r->line, why, sizeof(why));

	switch (outcome)
	{
		case DELIVERY_OK:
			r->progress.delivered++;
			r->metrics.in_flight.delivered++;
			observe_lag(r, ev.id);
			break;
		case DELIVERY_FAILED:
			if ((st = record_failure(r, &ev, why)) != SQL_OK)
				return st;
			r->progress.failed++;
			break;
		case DELIVERY_NOT_TRIED:
			relay_log("event %s not handed over: %s", ev.id, why);
			*not_tried = true;
			break;
		case DELIVERY_OUTPUT_ERROR:

			/*
			 * The lines of this batch may be lost with the reader: undo it.
			 * Should the ROLLBACK fail, closing the connection (relay_fatal)
			 * rolls back all the same.
			 */
			PQclear(drain);
			res = PQexec(r->conn, "ROLLBACK");
			if (PQresultStatus(res) != PGRES_COMMAND_OK)
				relay_log("ROLLBACK failed: %s", one_line(PQerrorMessage(r->conn)));
			PQclear(res);
			relay_fatal(EXIT_OUTPUT, "%s", why);
	}
	return SQL_OK;
}

/*
 * Standard output: one delivery transaction of up to --batch events; a
 * stop signal hands the events not yet written back.  *drained is how many
 * events okno_drain() handed out.
 */
static SqlStatus
run_batch(Relay *r, int *drained)
{
	PGresult   *drain;
	SqlStatus	st;
	bool		not_tried = false;
	int			n;
	int			i;

	*drained = 0;
	if ((st = begin_and_drain(r, &drain)) != SQL_OK)
		return st;
	n = PQntuples(drain);
	*drained = n;

	for (i = 0; i < n; i++)
	{
		if (stop_signal)
			break;
		if ((st = deliver_event(r, drain, i, &not_tried)) != SQL_OK)
		{
			PQclear(drain);
			return abandon_transaction(r, st);
		}
		if (not_tried)
			break;
		progress_report(r, false);

		/*
		 * A terminated backend says so at once; no point in handing out the
		 * rest of a batch that can no longer commit.
		 */
		if (!PQconsumeInput(r->conn) || PQstatus(r->conn) == CONNECTION_BAD ||
			r->server_closing)
		{
			relay_log("lost the connection to the server (delivering): %s",
					  r->server_closing ? "the server closed the session" :
					  one_line(PQerrorMessage(r->conn)));
			PQclear(drain);
			return SQL_LOST;
		}
	}

	/* a stop signal or an event not handed over: hand the rest back */
	if (i < n && (st = release_events(r, drain, i, n)) != SQL_OK)
	{
		PQclear(drain);
		return abandon_transaction(r, st);
	}
	PQclear(drain);

	if ((st = commit_transaction(r)) != SQL_OK)
		return st;
	return not_tried ? SQL_RETRY : SQL_OK;
}

/*
 * --exec: up to --batch events in a row, each in a delivery transaction of
 * its own (BEGIN; okno_drain(1); the command; COMMIT).  A command takes up
 * to --exec-timeout, so a batch of them would keep the events behind the
 * one in hand locked (and their commands not run) for up to batch times
 * that; taken one at a time, the events behind it stay pending and
 * unlocked, and other relays deliver them meanwhile.  The round ends early
 * when a drain finds nothing due.  *drained is how many events were taken.
 */
static SqlStatus
run_exec_round(Relay *r, int *drained)
{
	PGresult   *drain;
	SqlStatus	st;
	bool		not_tried = false;

	*drained = 0;
	while (*drained < r->opts.batch && !stop_signal)
	{
		if ((st = begin_and_drain(r, &drain)) != SQL_OK)
			return st;
		if (PQntuples(drain) == 0)
		{
			/* COMMIT, not ROLLBACK: an abort makes okno's next drain rescan */
			PQclear(drain);
			return commit_transaction(r);
		}
		(*drained)++;

		st = deliver_event(r, drain, 0, &not_tried);
		if (st == SQL_OK && not_tried)
			st = release_events(r, drain, 0, 1);
		PQclear(drain);
		if (st != SQL_OK)
			return abandon_transaction(r, st);
		if ((st = commit_transaction(r)) != SQL_OK)
			return st;
		if (not_tried)
			return SQL_RETRY;
		progress_report(r, false);
	}
	return SQL_OK;
}

/*
 * Deliver what is due: on standard output a batch, with --exec a round of
 * single-event transactions.  *drained is how many events were taken.
 */
SqlStatus
drain_due(Relay *r, int *drained)
{
	if (r->opts.exec_command != NULL)
		return run_exec_round(r, drained);
	return run_batch(r, drained);
}
