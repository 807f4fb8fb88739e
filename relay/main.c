/*-------------------------------------------------------------------------
 *
 * main.c
 *	  The delivery worker for okno's transactional outbox.
 *
 * okno-relay connects to a database where okno 0.2.0 or later is installed
 * and loops: BEGIN; SELECT * FROM okno_drain(batch); hand each event to
 * the recipient in turn; COMMIT.  The recipient is standard output (one
 * JSON line per event, written before the commit) or a command run once
 * per event (--exec).  A command may run for up to --exec-timeout, and
 * the events of an open delivery transaction stay locked, so with --exec
 * each event has a transaction of its own (okno_drain(1)) and --batch only
 * caps how many of those the relay runs in a row: a hanging command holds
 * only its own event, and other relays deliver the ones behind it
 * meanwhile.  A failed delivery is recorded with okno_record_failure() in
 * the delivery transaction, so the rest of a batch still commits as
 * delivered and the failed event comes back after okno's backoff.  Between
 * batches the relay waits inside the server by default (--wait=server):
 * CALL okno_wait(ms), which returns when a commit wrote an event, when a
 * delayed one comes due, or after --poll seconds, and holds no snapshot
 * meanwhile; a stop signal cancels it.  With an okno that has no okno_wait,
 * or with --wait=listen, it waits for NOTIFY okno_outbox (sent when
 * okno.notify is on), for the retry time of an event it saw fail, or for a
 * while: 10 ms after a drain that found events, twice as long after each
 * drain that found none, --poll seconds at the most (--wait=poll: the same
 * without LISTEN).
 *
 * --subscriber NAME delivers the events of a subscriber added with
 * okno_subscribe (okno 0.5.0): the same loop with okno_drain(batch, NAME),
 * okno_record_failure(id, error, NAME) and okno_release(id, NAME), so that
 * its attempts, backoff and parking are its own, and it waits with
 * CALL okno_wait(ms, NULL, NAME).
 *
 * --metrics-file writes counters and a delivery lag histogram in
 * Prometheus's text format, for node_exporter's textfile collector.
 *
 * Delivery is at least once: whatever the recipient got before a commit
 * that did not happen (a crash, a lost connection) is handed out again.
 * See relay/README.md.
 *
 * The program is a plain libpq client: no server headers, one process,
 * one connection, no threads.  Signals only set a flag and write a byte to
 * a pipe (the "self-pipe trick"), so every wait (for the server, for a
 * command, for a reconnect) is a poll() that a signal ends.
 *
 * The work is split by duty: relay.h says which file does what.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/main.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relay.h"

static const char *const wait_mode_names[] = {"server", "listen", "poll"};

int
main(int argc, char **argv)
{
	char		errbuf[1024];
	SqlStatus	st;
	double		retry_delay = BACKOFF_MIN;
	double		idle_wait = POLL_FIRST;
	bool		woken = false;	/* the last okno_wait said an event may be due */
	int			empty_wakes = 0;	/* ... and the drain after it found none */
	Relay		relay;
	Relay	   *r = &relay;

	memset(&relay, 0, sizeof(relay));
	relay.metrics.written_at = -1e9;	/* never written */
	log_init(&relay);
	parse_options(&relay.opts, argc, argv);
	relay.wait_mode = relay.opts.wait;
	check_std_fds(r);
	setup_signals();
	if (r->opts.metrics_file != NULL && !metrics_at_every_exit())
		relay_fatal(EXIT_SERVER, "atexit failed");

	r->progress.tty = isatty(STDERR_FILENO);
	r->progress.enabled = r->opts.verbose || r->progress.tty;
	r->progress.start_time = r->progress.time = now_seconds();
	r->progress.count = 0;

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
	metrics_maybe_write(r);

	while (!stop_signal)
	{
		int			drained = 0;

		if (r->conn == NULL)
		{
			reconnect(r);
			woken = false;
			continue;
		}

		if (r->opts.exec_command != NULL)
			st = run_exec_round(r, &drained);
		else
			st = run_batch(r, &drained);
		metrics_maybe_write(r);
		if (st == SQL_LOST)
		{
			reconnect(r);
			woken = false;
			continue;
		}
		if (st == SQL_RETRY)
		{
			sleep_interruptible(retry_delay);
			retry_delay *= 2;
			if (retry_delay > BACKOFF_MAX)
				retry_delay = BACKOFF_MAX;
			continue;
		}
		retry_delay = BACKOFF_MIN;

		if (stop_signal)
			break;
		if (drained == r->opts.batch)
			continue;			/* a full batch or round: there may be more */
		if (r->opts.once)
		{
			if (drained == 0)
				break;			/* nothing due any more */
			continue;
		}
		progress_report(r, false);

		if (r->wait_mode == WAIT_SERVER)
		{
			/*
			 * In the server: okno_wait returns at once if more are due.  A
			 * wake can still find nothing to drain (another relay took the
			 * event first): when it does, pause before the next wait, 10 ms
			 * doubling up to 1 s (or --poll, if shorter), so that relays
			 * racing each other do not spin.  An event written during the
			 * pause is found when okno_wait begins.
			 */
			if (drained > 0 || !woken)
				empty_wakes = 0;
			else if (empty_wakes < 30)
				empty_wakes++;

			/*
			 * After a drain that found events, let those of the next 10 ms
			 * gather and drain again, as polling does: woken by every
			 * commit, a relay under load would run a delivery transaction
			 * for every few creates and take the CPU the writers need.
			 * Only a drain that found nothing is followed by okno_wait, so
			 * an idle relay is woken at once by the next commit.
			 */
			if (drained > 0)
			{
				sleep_interruptible(POLL_FIRST);
				woken = false;	/* the next drain follows a pause, not a wake */
				continue;
			}
			if (empty_wakes > 0)
			{
				double		pause = POLL_FIRST;
				double		most = (r->opts.poll < EMPTY_WAKE_PAUSE_MAX) ? r->opts.poll : EMPTY_WAKE_PAUSE_MAX;
				int			i;

				for (i = 1; i < empty_wakes && pause < most; i++)
					pause *= 2;
				sleep_interruptible(pause < most ? pause : most);
				if (stop_signal)
					break;
			}
			st = wait_in_server(r, &woken);
			if (st == SQL_LOST)
			{
				reconnect(r);
				woken = false;
			}
			else if (st == SQL_RETRY)
			{
				sleep_interruptible(retry_delay);
				retry_delay *= 2;
				if (retry_delay > BACKOFF_MAX)
					retry_delay = BACKOFF_MAX;
			}
			continue;
		}

		/*
		 * Without notifications (okno.notify is off by default), look again
		 * soon after a drain that found events, and back off while there
		 * are none: 10 ms, doubling after every empty drain, up to --poll.
		 */
		if (drained > 0)
			idle_wait = POLL_FIRST;
		else if (idle_wait < r->opts.poll)
			idle_wait *= 2;
		if (!wait_for_work(r, idle_wait < r->opts.poll ? idle_wait : r->opts.poll))
			reconnect(r);
	}

	progress_report(r, true);
	if (r->opts.verbose && stop_signal)
		relay_log("stopped by signal %d", (int) stop_signal);
	if (r->conn != NULL)
		PQfinish(r->conn);
	return EXIT_DONE;
}
