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
 * Lost delivery transactions.  A transaction whose connection ends before
 * its COMMIT leaves its events pending, with no attempt charged: whatever
 * keeps ending it (a server that restarts, a proxy that cuts sessions)
 * would have the relay hand the same events out for ever.  So the relay
 * counts, per event, the delivery transactions lost in a row, and an event
 * drained again after LOST_LIMIT of them is not handed over but charged a
 * failed attempt in its transaction (okno_record_failure): okno's backoff
 * applies, and okno.max_attempts parks it.  The counts go when a delivery
 * transaction with events commits.
 */

static int
lost_index(const Relay *r, const char *id)
{
	int			i;

	for (i = 0; i < r->lost.n; i++)
		if (strcmp(r->lost.ids[i], id) == 0)
			return i;
	return -1;
}

/* the events of a drain whose transaction was lost, one more time each */
static void
note_lost(Relay *r, PGresult *drain)
{
	int			n = drain != NULL ? PQntuples(drain) : 0;
	int			i;

	if (r->lost.ids == NULL)
	{
		r->lost.ids = relay_malloc(sizeof(*r->lost.ids) * MAX_BATCH);
		r->lost.times = relay_malloc(sizeof(int) * MAX_BATCH);
	}
	for (i = 0; i < n; i++)
	{
		const char *id = PQgetvalue(drain, i, 0);
		int			k = lost_index(r, id);

		if (k >= 0)
			r->lost.times[k]++;
		else if (r->lost.n < MAX_BATCH && strlen(id) < sizeof(*r->lost.ids))
		{
			strcpy(r->lost.ids[r->lost.n], id);
			r->lost.times[r->lost.n++] = 1;
		}
	}
}

/* how many delivery transactions of the event were lost in a row */
static int
lost_times(const Relay *r, const char *id)
{
	int			k = lost_index(r, id);

	return k >= 0 ? r->lost.times[k] : 0;
}

/* a statement's status; a lost connection notes the drain's events */
static SqlStatus
lost_or(Relay *r, PGresult *drain, SqlStatus st)
{
	if (st == SQL_LOST)
		note_lost(r, drain);
	return st;
}

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
	res = run_statement(r, r->sql_record_failure, 2, params, "okno_record_failure");
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
	res = run_statement(r, r->sql_release, 1, params, "okno_release");
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

	if (st == SQL_RETRY || st == SQL_UNREADABLE)
	{
		res = run_statement(r, "ROLLBACK", 0, NULL, "ROLLBACK");
		if (check_result(r, res, PGRES_COMMAND_OK, "ROLLBACK") != SQL_OK)
			return SQL_LOST;
		PQclear(res);
	}
	return st;
}

/*
 * BEGIN; okno_drain(n), in one round trip (sql: r->sql_drain, whose n is
 * --batch on stdout and 1 with --exec, or r->sql_drain_ids, the careful
 * drain of one event's id and attempts; ncolumns: what it returns).  On
 * SQL_OK the delivery transaction is open and *drain holds its events;
 * otherwise no transaction is open.  SQL_UNREADABLE: the events could not
 * be read (careful_event).
 */
static SqlStatus
begin_and_drain(Relay *r, const char *sql, int ncolumns, PGresult **drain)
{
	PGresult   *res;
	SqlStatus	st;

	/*
	 * run_statement returns the last statement's result, or the error that
	 * ended the string; the transaction that BEGIN opened stays open after it.
	 * After an error in either statement a ROLLBACK is right (outside a
	 * transaction it only warns).
	 */
	*drain = NULL;
	memset(&r->metrics.in_flight, 0, sizeof(r->metrics.in_flight));
	res = run_statement(r, sql, 0, NULL, "okno_drain");
	if ((st = check_answer(r, res, PGRES_TUPLES_OK, "okno_drain", true)) != SQL_OK)
		return abandon_transaction(r, st);
	if (PQnfields(res) != ncolumns)
	{
		int			nfields = PQnfields(res);

		PQclear(res);
		relay_fatal(EXIT_SERVER, "okno_drain returned %d columns, %d expected", nfields, ncolumns);
	}
	r->metrics.in_flight.events = PQntuples(res);
	*drain = res;
	return SQL_OK;
}

/*
 * Standard output could not be written or synced: the lines of this batch
 * may be lost, so undo it and end the relay (exit 4).  Should the ROLLBACK
 * fail, closing the connection (relay_fatal) rolls back all the same.
 */
static void
output_failed(Relay *r, const char *why)
{
	PGresult   *res;

	res = run_statement(r, "ROLLBACK", 0, NULL, "ROLLBACK");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		relay_log("ROLLBACK failed: %s", one_line(PQerrorMessage(r->conn)));
	PQclear(res);
	relay_fatal(EXIT_OUTPUT, "%s", why);
}

/*
 * COMMIT the delivery transaction, the lines it wrote to a file on disk
 * first: the commit calls them delivered.
 */
static SqlStatus
commit_transaction(Relay *r)
{
	PGresult   *res;
	SqlStatus	st;
	char		why[512];

	if (!output_sync(r, why, sizeof(why)))
		output_failed(r, why);
	res = run_statement(r, "COMMIT", 0, NULL, "COMMIT");
	if ((st = check_result(r, res, PGRES_COMMAND_OK, "COMMIT")) != SQL_OK)
		return st;
	if (strcmp(PQcmdStatus(res), "COMMIT") != 0)
	{
		relay_log("the delivery transaction did not commit (%s)", PQcmdStatus(res));
		PQclear(res);
		return SQL_RETRY;
	}
	PQclear(res);
	if (r->metrics.in_flight.events > 0)
		r->lost.n = 0;			/* delivered: no transaction lost in a row */
	commit_counts(r);
	return SQL_OK;
}

/* event i of a drain */
static void
event_at(PGresult *drain, int i, RelayEvent *ev)
{
	if (PQgetisnull(drain, i, 0))
		relay_fatal(EXIT_SERVER, "okno_drain returned an event without an id");
	ev->id = PQgetvalue(drain, i, 0);
	ev->kind = PQgetisnull(drain, i, 1) ? NULL : PQgetvalue(drain, i, 1);
	ev->payload = PQgetisnull(drain, i, 2) ? NULL : PQgetvalue(drain, i, 2);
	ev->attempts = PQgetisnull(drain, i, 3) ? NULL : PQgetvalue(drain, i, 3);
}

/*
 * Hand the event to the recipient and settle the outcome in the open
 * delivery transaction: a delivery is counted, a failure recorded with
 * okno_record_failure().  *not_tried is set when the relay could not hand
 * the event over at all (the caller releases it).  A write error on
 * standard output rolls the transaction back and ends the relay (exit 4).
 */
static SqlStatus
deliver_event(Relay *r, const RelayEvent *ev, bool *not_tried)
{
	DeliveryOutcome outcome;
	SqlStatus	st;
	char		why[512];

	*not_tried = false;
	build_line(&r->line, ev);

	why[0] = '\0';
	if (lost_times(r, ev->id) >= LOST_LIMIT)
	{
		snprintf(why, sizeof(why), "its delivery transaction was lost %d times in a row",
				 lost_times(r, ev->id));
		r->lost.times[lost_index(r, ev->id)] = 0;
		outcome = DELIVERY_FAILED;
	}
	else if (r->opts.exec_command != NULL)
		outcome = deliver_exec(r, ev, &r->line, why, sizeof(why));
	else
		outcome = output_line(r, r->line.data, r->line.len, why, sizeof(why));

	switch (outcome)
	{
		case DELIVERY_OK:
			r->progress.delivered++;
			r->metrics.in_flight.delivered++;
			observe_lag(r, ev->id);
			break;
		case DELIVERY_FAILED:
			if ((st = record_failure(r, ev, why)) != SQL_OK)
				return st;
			r->progress.failed++;
			break;
		case DELIVERY_NOT_TRIED:
			relay_log("event %s not handed over: %s", ev->id, why);
			*not_tried = true;
			break;
		case DELIVERY_STOPPED:
			/* (a stop signal: the rest of the batch is handed back) */
			relay_log("stopped while standard output took no more: event %s and the rest of the batch are handed back",
					  ev->id);
			*not_tried = true;
			break;
		case DELIVERY_OUTPUT_ERROR:
			output_failed(r, why);
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
	RelayEvent	ev;
	SqlStatus	st;
	bool		not_tried = false;
	int			n;
	int			i;

	*drained = 0;
	if ((st = begin_and_drain(r, r->sql_drain, 4, &drain)) != SQL_OK)
		return st;
	n = PQntuples(drain);
	*drained = n;

	for (i = 0; i < n; i++)
	{
		if (stop_signal)
			break;
		event_at(drain, i, &ev);
		if ((st = deliver_event(r, &ev, &not_tried)) != SQL_OK)
		{
			st = lost_or(r, drain, st);
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
			st = lost_or(r, drain, SQL_LOST);
			PQclear(drain);
			return st;
		}
	}

	/* a stop signal or an event not handed over: hand the rest back */
	if (i < n && (st = release_events(r, drain, i, n)) != SQL_OK)
	{
		st = lost_or(r, drain, st);
		PQclear(drain);
		return abandon_transaction(r, st);
	}

	st = lost_or(r, drain, commit_transaction(r));
	PQclear(drain);
	if (st != SQL_OK)
		return st;
	return not_tried && !stop_signal ? SQL_RETRY : SQL_OK;
}

/*
 * The event of a single-event delivery transaction (--exec, and the
 * careful one): deliver it, hand it back if it could not be handed over,
 * commit.  drain: the transaction's drain, its first column the event's id
 * (a lost connection counts it).  SQL_RETRY after the commit of an event
 * not handed over.
 */
static SqlStatus
finish_single(Relay *r, PGresult *drain, const RelayEvent *ev)
{
	SqlStatus	st;
	bool		not_tried = false;

	st = deliver_event(r, ev, &not_tried);
	if (st == SQL_OK && not_tried)
		st = release_events(r, drain, 0, 1);
	if (st != SQL_OK)
		return abandon_transaction(r, lost_or(r, drain, st));
	st = lost_or(r, drain, commit_transaction(r));
	if (st == SQL_OK && not_tried)
		return SQL_RETRY;
	return st;
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
	RelayEvent	ev;
	SqlStatus	st;

	while (*drained < r->opts.batch && !stop_signal)
	{
		if ((st = begin_and_drain(r, r->sql_drain, 4, &drain)) != SQL_OK)
			return st;
		if (PQntuples(drain) == 0)
		{
			/* COMMIT, not ROLLBACK: an abort makes okno's next drain rescan */
			PQclear(drain);
			return commit_transaction(r);
		}
		(*drained)++;

		event_at(drain, 0, &ev);
		st = finish_single(r, drain, &ev);
		PQclear(drain);
		if (st != SQL_OK)
			return st;
		progress_report(r, false);
	}
	return SQL_OK;
}

/*
 * An event the relay could not read, in the careful delivery transaction
 * (rolled back to the savepoint before it was read): one with no UTF-8
 * form never will be, so it is parked at once (okno.max_attempts set to 1
 * for the transaction) for the operator to mend and requeue; one that
 * libpq could not read (out of memory, most likely) is charged a failed
 * attempt, okno's backoff and okno.max_attempts deciding what follows.
 */
static SqlStatus
refuse_unreadable(Relay *r, const RelayEvent *ev)
{
	PGresult   *res;
	SqlStatus	st;
	char		why[700];

	res = run_statement(r, "ROLLBACK TO SAVEPOINT okno_relay_event", 0, NULL, "ROLLBACK TO SAVEPOINT");
	if ((st = check_result(r, res, PGRES_COMMAND_OK, "ROLLBACK TO SAVEPOINT")) != SQL_OK)
		return st;
	PQclear(res);
	if (r->unreadable.encoding)
	{
		snprintf(why, sizeof(why), "its kind or payload has no UTF-8 form: %s", r->unreadable.why);
		res = run_statement(r, "SELECT pg_catalog.set_config('okno.max_attempts', '1', true)",
							0, NULL, "set_config");
		if ((st = check_result(r, res, PGRES_TUPLES_OK, "set_config")) != SQL_OK)
			return st;
		PQclear(res);
	}
	else
		snprintf(why, sizeof(why), "okno-relay could not read it: %s", r->unreadable.why);
	if ((st = record_failure(r, ev, why)) != SQL_OK)
		return st;
	r->progress.failed++;
	return SQL_OK;
}

/*
 * One event in a careful delivery transaction: its id and attempts
 * drained first, then its kind and payload read behind a savepoint, so
 * that an event the relay cannot read is refused (refuse_unreadable) and
 * the others delivered.  *found: the drain had an event.
 */
static SqlStatus
careful_event(Relay *r, bool *found)
{
	PGresult   *ids;
	PGresult   *body = NULL;
	PGresult   *res;
	RelayEvent	ev;
	SqlStatus	st;
	const char *params[1];

	*found = false;
	if ((st = begin_and_drain(r, r->sql_drain_ids, 2, &ids)) != SQL_OK)
		return st;
	if (PQntuples(ids) == 0)
	{
		PQclear(ids);
		return commit_transaction(r);
	}
	*found = true;
	memset(&ev, 0, sizeof(ev));
	ev.id = PQgetvalue(ids, 0, 0);
	ev.attempts = PQgetisnull(ids, 0, 1) ? NULL : PQgetvalue(ids, 0, 1);
	params[0] = ev.id;

	res = run_statement(r, "SAVEPOINT okno_relay_event", 0, NULL, "SAVEPOINT");
	if ((st = check_result(r, res, PGRES_COMMAND_OK, "SAVEPOINT")) == SQL_OK)
	{
		PQclear(res);
		body = run_statement(r, r->sql_event, 1, params, "reading an event");
		st = check_answer(r, body, PGRES_TUPLES_OK, "reading an event", true);
	}
	if (st == SQL_OK && PQntuples(body) != 1)
	{
		PQclear(body);
		relay_fatal(EXIT_SERVER, "event %s, just drained, is not in outbox", ev.id);
	}
	if (st == SQL_OK)
	{
		ev.kind = PQgetisnull(body, 0, 0) ? NULL : PQgetvalue(body, 0, 0);
		ev.payload = PQgetisnull(body, 0, 1) ? NULL : PQgetvalue(body, 0, 1);
		st = finish_single(r, ids, &ev);
		PQclear(body);
	}
	else
	{
		if (st == SQL_UNREADABLE)
			st = refuse_unreadable(r, &ev);
		if (st == SQL_OK)
			st = lost_or(r, ids, commit_transaction(r));
		else
			st = abandon_transaction(r, lost_or(r, ids, st));
	}
	PQclear(ids);
	return st;
}

/*
 * A drain whose events could not be read (an event with no UTF-8 form in
 * a database of another encoding, or a batch too big for the relay's
 * memory) fails as a whole, and would fail again every time, the events
 * behind it waiting for ever.  So the relay takes the next --batch events
 * one at a time, each in a careful delivery transaction of its own
 * (careful_event), then goes back to whole batches.
 */
static SqlStatus
run_careful_round(Relay *r, int *drained)
{
	SqlStatus	st;
	bool		found = true;

	relay_log("a drain could not be read (%s): taking the next events one at a time",
			  r->unreadable.why);
	while (*drained < r->opts.batch && !stop_signal)
	{
		if ((st = careful_event(r, &found)) != SQL_OK)
			return st;
		if (!found)
			break;
		(*drained)++;
		progress_report(r, false);
	}
	return SQL_OK;
}

/*
 * Deliver what is due: on standard output a batch, with --exec a round of
 * single-event transactions, and a careful round when a drain could not be
 * read.  *drained is how many events were taken.
 */
SqlStatus
drain_due(Relay *r, int *drained)
{
	SqlStatus	st;

	*drained = 0;
	if (r->opts.exec_command != NULL)
		st = run_exec_round(r, drained);
	else
		st = run_batch(r, drained);
	if (st == SQL_UNREADABLE)
		st = run_careful_round(r, drained);
	return st;
}
