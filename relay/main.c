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
 * okno_subscribe (okno 0.5.0 or later): the same loop with
 * okno_drain(batch, NAME), okno_record_failure(id, error, NAME) and
 * okno_release(id, NAME), so that its attempts, backoff and parking are its
 * own, and it waits with CALL okno_wait(ms, NULL, NAME).
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
#include <string.h>

#include "relay.h"

/* a Relay that has done nothing yet, and the one log.c speaks for */
static void
relay_init(Relay *r)
{
	memset(r, 0, sizeof(*r));
	r->metrics.written_at = -1e9;	/* never written */
	r->pace.retry_delay = BACKOFF_MIN;
	r->pace.idle_wait = POLL_FIRST;
	log_init(r);
}

int
main(int argc, char **argv)
{
	/* static: the metrics file is written at exit, after main returns */
	static Relay relay;
	SqlStatus	st;
	int			drained;

	relay_init(&relay);
	parse_options(&relay.opts, argc, argv);
	relay.wait_mode = relay.opts.wait;
	check_std_fds(&relay);
	setup_signals();
	output_start(&relay);
	if (relay.opts.metrics_file != NULL && !metrics_at_every_exit(&relay))
		relay_fatal(EXIT_SERVER, "atexit failed");
	progress_start(&relay);
	connect_at_start(&relay);
	metrics_maybe_write(&relay);

	while (!stop_signal)
	{
		if (relay.conn == NULL)
		{
			recover(&relay, SQL_LOST);
			continue;
		}
		st = drain_due(&relay, &drained);
		metrics_maybe_write(&relay);
		if (st != SQL_OK)
		{
			recover(&relay, st);
			continue;
		}
		relay.pace.retry_delay = BACKOFF_MIN;
		relay.pace.lost_streak = 0;
		relay.pace.read_only = 0;
		if (stop_signal || drained == relay.opts.batch)
			continue;			/* a full batch or round: there may be more */
		if (relay.opts.once)
		{
			if (drained == 0)
				break;			/* nothing due any more */
			continue;
		}
		progress_report(&relay, false);
		wait_between_batches(&relay, drained);
	}

	progress_report(&relay, true);
	if (relay.opts.verbose && stop_signal)
		relay_log("stopped by signal %d", (int) stop_signal);
	if (relay.conn != NULL)
		PQfinish(relay.conn);
	return EXIT_DONE;
}
