/*-------------------------------------------------------------------------
 *
 * metrics.c
 *	  --metrics-file: counters and a delivery lag histogram in
 *	  Prometheus's text format.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/metrics.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "relay.h"

/* okno_relay_delivery_lag_seconds's upper bounds */
static const double lag_bounds[LAG_BUCKETS] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60
};

/*
 * okno_relay_delivery_lag_seconds: now minus the time the event was
 * written, which a UUID version 7 event id carries in its first 48 bits
 * (Unix milliseconds).  Ids of another version (events the course's
 * service wrote before okno served its tables) are not observed.
 */
void
observe_lag(Relay *r, const char *event_id)
{
	unsigned long long ms = 0;
	double		lag;
	int			i;

	if (r->opts.metrics_file == NULL)
		return;
	/* xxxxxxxx-xxxx-7xxx-...: 8 + 4 hex digits of time, then the version */
	if (strlen(event_id) != 36 || event_id[8] != '-' || event_id[14] != '7')
		return;
	for (i = 0; i < 13; i++)
	{
		char		c = event_id[i];
		int			d;

		if (i == 8)
			continue;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return;
		ms = ms * 16 + (unsigned long long) d;
	}
	lag = unix_seconds() - (double) ms / 1000.0;
	/*
	 * an id of a time more than a minute ahead or ten years back is not a
	 * writer's clock but a forged id (a plain INSERT may write any): not
	 * observed; within a minute ahead, the clocks are apart: 0
	 */
	if (lag < -LAG_FUTURE_SLACK || lag > LAG_PAST_LIMIT)
		return;
	if (lag < 0)
		lag = 0;
	for (i = 0; i < LAG_BUCKETS && lag > lag_bounds[i]; i++)
		;
	r->metrics.in_flight.lag_buckets[i]++;
	r->metrics.in_flight.lag_count++;
	r->metrics.in_flight.lag_sum += lag;
}

/* the delivery transaction committed: what it did counts */
void
commit_counts(Relay *r)
{
	int			i;

	r->metrics.last_success = unix_seconds();
	if (r->metrics.in_flight.events == 0)
		return;
	r->metrics.batches++;
	r->metrics.committed.events += r->metrics.in_flight.events;
	r->metrics.committed.delivered += r->metrics.in_flight.delivered;
	r->metrics.committed.failed += r->metrics.in_flight.failed;
	r->metrics.committed.parked += r->metrics.in_flight.parked;
	r->metrics.committed.released += r->metrics.in_flight.released;
	for (i = 0; i <= LAG_BUCKETS; i++)
		r->metrics.committed.lag_buckets[i] += r->metrics.in_flight.lag_buckets[i];
	r->metrics.committed.lag_count += r->metrics.in_flight.lag_count;
	r->metrics.committed.lag_sum += r->metrics.in_flight.lag_sum;
	memset(&r->metrics.in_flight, 0, sizeof(r->metrics.in_flight));
}

static void
metric_header(LineBuffer *buf, const char *name, const char *type, const char *help)
{
	buf_printf(buf, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * subscriber="NAME", the label every series carries, so that the series of
 * a default relay and of a --subscriber relay differ ("default" for the
 * default subscriber, as okno_subscribers names it).  The value is escaped
 * as the text format wants (\\, \", \n), although okno accepts only
 * [a-z][a-z0-9_-]* as a subscriber's name: the server has not checked
 * --subscriber yet when the relay writes its first file (or its last, at
 * an exit for a bad name).  Malloc'd.
 */
static char *
metrics_label(Relay *r)
{
	const char *name = r->opts.subscriber != NULL ? r->opts.subscriber : "default";
	LineBuffer	buf = {NULL, 0, 0};
	const char *p;

	buf_append(&buf, "subscriber=\"", 12);
	for (p = name; *p != '\0'; p++)
	{
		if (*p == '\\')
			buf_append(&buf, "\\\\", 2);
		else if (*p == '"')
			buf_append(&buf, "\\\"", 2);
		else if (*p == '\n')
			buf_append(&buf, "\\n", 2);
		else
			buf_append(&buf, p, 1);
	}
	buf_append(&buf, "\"", 1);
	return buf.data;			/* buf_append ends it with a NUL */
}

/* 64 unpredictable bits for a temporary file's name */
static unsigned long long
random_suffix(void)
{
	static unsigned long long counter = 0;
	unsigned long long r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t) sizeof(r))
		return r;
	/* no entropy yet (early boot): unique, if guessable */
	return ((unsigned long long) (now_seconds() * 1e9)) ^
		((unsigned long long) getpid() << 32) ^ ++counter;
}

/*
 * Create the temporary file for PATH beside it, as PATH.tmp.<pid>.<64
 * random bits in hex>, with O_CREAT | O_EXCL | O_NOFOLLOW: the metrics
 * directory may be shared (node_exporter's textfile directory), and a name
 * someone else could guess and plant a symlink at (PATH.tmp.<pid>, as the
 * relay once used, opened with O_TRUNC) would let them have the relay
 * overwrite any file it may write.  With O_EXCL the open never follows a
 * symlink nor reuses a file that exists; then the relay tries another
 * random name, a few times, and never unlinks a file it did not create (a
 * name it did not create may be another process's, and is not the relay's
 * to remove; the textfile collector reads only *.prom, so a temporary file
 * left by a relay killed while writing does no harm).  The file descriptor,
 * or -1 with errno set; *tmp is the name (malloc'd) either way.
 */
static int
open_metrics_temp(Relay *r, char **tmp)
{
	size_t		len = strlen(r->opts.metrics_file) + 64;
	int			fd = -1;
	int			attempt;

	*tmp = relay_malloc(len);
	for (attempt = 0; attempt < 8; attempt++)
	{
		snprintf(*tmp, len, "%s.tmp.%ld.%016llx", r->opts.metrics_file,
				 (long) getpid(), random_suffix());
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	return fd;
}

/* the Relay whose metrics the exit writes (metrics_at_every_exit) */
static Relay *exit_relay = NULL;

/* --metrics-file: at exit, whatever the exit status (atexit) */
static void
metrics_at_exit(void)
{
	if (exit_relay != NULL && exit_relay->opts.metrics_file != NULL)
		metrics_write(exit_relay);
}

/*
 * Write r's metrics file at every exit from now on; false if atexit fails.
 * r must live until then (main's Relay is static).
 */
bool
metrics_at_every_exit(Relay *r)
{
	exit_relay = r;
	return atexit(metrics_at_exit) == 0;
}

/*
 * The metrics file's text, Prometheus's text exposition format, into buf:
 * the counters, the time of the last success and the delivery lag
 * histogram, every series with the label subscriber="NAME".
 */
static void
metrics_text(Relay *r, LineBuffer *buf)
{
	static const struct
	{
		const char *name;
		const char *help;
	}			counters[] = {
		{"okno_relay_events_delivered_total", "Events delivered, in delivery transactions that committed."},
		{"okno_relay_events_failed_total", "Failed deliveries recorded with okno_record_failure (parked ones included)."},
		{"okno_relay_events_parked_total", "Events parked after okno.max_attempts failed deliveries."},
		{"okno_relay_events_released_total", "Events handed back undelivered with okno_release (a stop signal, a command that could not start)."},
		{"okno_relay_batches_total", "Delivery transactions that committed with at least one event."},
		{"okno_relay_reconnects_total", "Connections re-established after a lost one."}
	};
	long long	values[6];
	char	   *label = metrics_label(r);
	long long	cumulative = 0;
	int			i;

	values[0] = r->metrics.committed.delivered;
	values[1] = r->metrics.committed.failed;
	values[2] = r->metrics.committed.parked;
	values[3] = r->metrics.committed.released;
	values[4] = r->metrics.batches;
	values[5] = r->metrics.reconnects;
	for (i = 0; i < 6; i++)
	{
		metric_header(buf, counters[i].name, "counter", counters[i].help);
		buf_printf(buf, "%s{%s} %lld\n", counters[i].name, label, values[i]);
	}
	metric_header(buf, "okno_relay_last_success_timestamp_seconds", "gauge",
				  "Unix time of the last delivery transaction that committed, empty ones included (0: none yet).");
	buf_printf(buf, "okno_relay_last_success_timestamp_seconds{%s} %.3f\n", label, r->metrics.last_success);
	metric_header(buf, "okno_relay_delivery_lag_seconds", "histogram",
				  "Seconds from an event's write (its UUID v7 event_id) to its delivery.");
	for (i = 0; i <= LAG_BUCKETS; i++)
	{
		cumulative += r->metrics.committed.lag_buckets[i];
		if (i < LAG_BUCKETS)
			buf_printf(buf, "okno_relay_delivery_lag_seconds_bucket{%s,le=\"%g\"} %lld\n",
					   label, lag_bounds[i], cumulative);
		else
			buf_printf(buf, "okno_relay_delivery_lag_seconds_bucket{%s,le=\"+Inf\"} %lld\n",
					   label, cumulative);
	}
	buf_printf(buf, "okno_relay_delivery_lag_seconds_sum{%s} %.6f\n", label, r->metrics.committed.lag_sum);
	buf_printf(buf, "okno_relay_delivery_lag_seconds_count{%s} %lld\n", label, r->metrics.committed.lag_count);
	free(label);
}

/*
 * Write buf to a new temporary file beside PATH (open_metrics_temp) and
 * rename it over PATH.  False on failure, with the errno of the step that
 * failed in *save_errno (ENOSPC for a write that wrote nothing), after the
 * temporary file, if it was created, was removed.  *tmp is its name
 * (malloc'd) either way.
 */
static bool
replace_metrics_file(Relay *r, const LineBuffer *buf, char **tmp, int *save_errno)
{
	size_t		done = 0;
	int			fd;
	bool		failed = false;

	fd = open_metrics_temp(r, tmp);
	if (fd < 0)
	{
		failed = true;
		*save_errno = errno;
	}
	while (!failed && done < buf->len)
	{
		ssize_t		n = write(fd, buf->data + done, buf->len - done);

		if (n > 0)
			done += (size_t) n;
		else if (n < 0 && errno == EINTR)
			continue;
		else
		{
			failed = true;
			*save_errno = (n < 0) ? errno : ENOSPC;
		}
	}
	if (fd >= 0 && close(fd) != 0 && !failed)
	{
		failed = true;
		*save_errno = errno;
	}
	if (!failed && rename(*tmp, r->opts.metrics_file) != 0)
	{
		failed = true;
		*save_errno = errno;
	}
	if (failed && fd >= 0)
		(void) unlink(*tmp);
	return !failed;
}

/*
 * --metrics-file: Prometheus's text exposition format, written to a new
 * temporary file beside PATH (open_metrics_temp) and renamed over PATH, so
 * that a reader (node_exporter's textfile collector) never sees half a
 * file; rename replaces PATH itself, a symlink included, and follows
 * nothing.  Every series has the label subscriber="NAME".  A failure is
 * logged once (and its end), and the relay goes on.
 */
void
metrics_write(Relay *r)
{
	LineBuffer	buf = {NULL, 0, 0};
	char	   *tmp;
	int			save_errno = 0;

	metrics_text(r, &buf);
	if (!replace_metrics_file(r, &buf, &tmp, &save_errno))
	{
		if (!r->metrics.failing)
			relay_log("could not write the metrics file \"%s\": %s",
					  r->opts.metrics_file, strerror(save_errno));
		r->metrics.failing = true;
	}
	else if (r->metrics.failing)
	{
		relay_log("the metrics file \"%s\" is written again", r->opts.metrics_file);
		r->metrics.failing = false;
	}
	free(tmp);
	free(buf.data);
	r->metrics.written_at = now_seconds();
}

/* --metrics-file, if a second has passed since the last write */
void
metrics_maybe_write(Relay *r)
{
	if (r->opts.metrics_file != NULL && now_seconds() - r->metrics.written_at >= METRICS_INTERVAL)
		metrics_write(r);
}
