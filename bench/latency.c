/*
 * bench/latency.c: okno-latency, tools/bench's probe of the time from a
 * booking's commit to its line on okno-relay's standard output (scenario 5).
 *
 *   okno-latency SAMPLES WARMUP GAP_MIN_MS GAP_MAX_MS DELAY_MS RUN RESOURCE SEED \
 *       <relay's stdout >samples.tsv
 *
 * Standard input is the relay's standard output (a FIFO); the connection
 * comes from libpq's environment (PGHOST, PGPORT, PGDATABASE, PGOPTIONS:
 * the caller sets synchronous_commit and okno.notify there).
 *
 * It waits until the relay's session is there and idle or waiting (in
 * pg_stat_activity), then DELAY_MS more, then makes WARMUP + SAMPLES
 * bookings one at a time, each in its own autocommitted statement:
 *
 *   SELECT okno_create_booking(1, 'lat.RUN.i', bench.payload(RESOURCE, RUN * 10^6 + i)) ->> 'id'
 *
 * and for each notes the clock before sending it, once its result (and so
 * its commit) has come back, and when the relay's line whose payload names
 * that booking_id was read.  The relay's output is read all the time, also
 * while a create is running (one poll() on both the connection and the
 * FIFO), so a line is timed when it arrives, whatever the probe is doing,
 * and the relay never blocks on a full pipe when others create meanwhile.
 * After a sample the next create starts GAP_MIN_MS to GAP_MAX_MS (uniformly
 * at random, seeded with SEED) after the later of the commit and the line.
 *
 * Output, one line per sample after the warm-up, tab-separated, times in
 * epoch seconds (CLOCK_REALTIME, nanoseconds):
 *
 *   sample booking_id t_send t_commit t_line lines_read_so_far
 *
 * t_line is empty when no line came within 10 s.  The probe only measures:
 * tools/bench computes nothing from it, bench/report.py derives the
 * latencies (t_line - t_commit).  Exit status 0, or 1 with a message on
 * stderr (connection or SQL error, the relay's output ended).
 *
 * libpq only (libpq-dev, which building okno-relay needs anyway), so that it
 * runs unchanged on every PostgreSQL version and in the Debian roots.
 *
 * Copyright (c) 2026, the okno authors
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#define LINE_TIMEOUT_NS	(10LL * 1000000000LL)
#define READY_TIMEOUT_NS (30LL * 1000000000LL)

static PGconn *conn;
static char inbuf[1 << 20];
static size_t inlen;
static bool in_eof;
static long long lines_read;

/*
 * the booking whose line is awaited (0: none; -1: its create is running,
 * its id not known yet), and when its line came; while a create runs, the
 * bookings of the lines read and when
 */
static long long awaited;
static int64_t awaited_seen_ns;
#define MAX_RECENT 65536
static long long recent_id[MAX_RECENT];
static int64_t recent_ns[MAX_RECENT];
static int	n_recent;

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void
die(const char *what, const char *detail)
{
	fprintf(stderr, "okno-latency: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	exit(1);
}

/* epoch seconds, to the nanosecond */
static void
print_time(int64_t ns)
{
	printf("%lld.%09lld", (long long) (ns / 1000000000LL), (long long) (ns % 1000000000LL));
}

/* the booking_id in a relay line's payload, or 0 */
static long long
booking_of(const char *line)
{
	const char *p = strstr(line, "\"payload\":");

	if (p == NULL || (p = strstr(p, "\"booking_id\":")) == NULL)
		return 0;
	return strtoll(p + strlen("\"booking_id\":"), NULL, 10);
}

/* read what the relay wrote, note the awaited line's arrival */
static void
read_relay(void)
{
	ssize_t		n;
	int64_t		t;
	char	   *start,
			   *nl;

	if (inlen == sizeof(inbuf) - 1)
		die("a line of the relay's output is longer than 1 MB", NULL);
	n = read(STDIN_FILENO, inbuf + inlen, sizeof(inbuf) - 1 - inlen);
	t = now_ns();
	if (n < 0)
	{
		if (errno == EINTR || errno == EAGAIN)
			return;
		die("reading the relay's output failed", strerror(errno));
	}
	if (n == 0)
	{
		in_eof = true;
		return;
	}
	inlen += (size_t) n;
	inbuf[inlen] = '\0';
	start = inbuf;
	while ((nl = memchr(start, '\n', inlen - (size_t) (start - inbuf))) != NULL)
	{
		*nl = '\0';
		lines_read++;
		if (awaited == -1 && n_recent < MAX_RECENT)
		{
			recent_id[n_recent] = booking_of(start);
			recent_ns[n_recent++] = t;
		}
		else if (awaited > 0 && awaited_seen_ns == 0 && booking_of(start) == awaited)
			awaited_seen_ns = t;
		start = nl + 1;
	}
	inlen -= (size_t) (start - inbuf);
	memmove(inbuf, start, inlen);
}

/*
 * Wait until DEADLINE (ns), or until the connection has input when
 * WITH_CONN, or until the awaited line came when STOP_ON_LINE, reading the
 * relay's output meanwhile.  True when the connection has input.
 */
static bool
pump(int64_t deadline, bool with_conn, bool stop_on_line)
{
	for (;;)
	{
		struct pollfd pfd[2];
		int			nfd = 0;
		int64_t		left;
		int			rc;

		if (stop_on_line && awaited_seen_ns != 0)
			return false;
		left = deadline - now_ns();
		if (left <= 0)
			return false;
		if (in_eof && !with_conn)
			return false;
		if (!in_eof)
		{
			pfd[nfd].fd = STDIN_FILENO;
			pfd[nfd].events = POLLIN;
			nfd++;
		}
		if (with_conn)
		{
			pfd[nfd].fd = PQsocket(conn);
			pfd[nfd].events = POLLIN;
			nfd++;
		}
		rc = poll(pfd, (nfds_t) nfd, (int) ((left + 999999) / 1000000));
		if (rc < 0)
		{
			if (errno == EINTR)
				continue;
			die("poll failed", strerror(errno));
		}
		if (!in_eof && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			read_relay();
		if (with_conn && (pfd[nfd - 1].revents & (POLLIN | POLLHUP | POLLERR)))
			return true;
	}
}

/*
 * Run SQL (with PARAMS) and return its one value (a copy, or NULL), reading
 * the relay's output while it runs; *DONE_NS: when the result was complete
 */
static char *
query(const char *sql, int nparams, const char *const *params, int64_t *done_ns)
{
	PGresult   *res,
			   *first = NULL;
	char	   *value = NULL;

	if (!PQsendQueryParams(conn, sql, nparams, NULL, params, NULL, NULL, 0))
		die("sending a query failed", PQerrorMessage(conn));
	for (;;)
	{
		if (!PQconsumeInput(conn))
			die("reading from the server failed", PQerrorMessage(conn));
		while (!PQisBusy(conn))
		{
			res = PQgetResult(conn);
			if (res == NULL)
			{
				if (done_ns)
					*done_ns = now_ns();
				if (first == NULL)
					die("no result", sql);
				if (PQresultStatus(first) != PGRES_TUPLES_OK)
					die(sql, PQresultErrorMessage(first));
				if (PQntuples(first) > 0 && !PQgetisnull(first, 0, 0))
					value = strdup(PQgetvalue(first, 0, 0));
				PQclear(first);
				return value;
			}
			if (first == NULL)
				first = res;
			else
				PQclear(res);
		}
		pump(now_ns() + 3600LL * 1000000000LL, true, false);
	}
}

static long
arg_long(const char *s, const char *what)
{
	char	   *end;
	long		v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0)
		die("not a non-negative integer", what);
	return v;
}

int
main(int argc, char **argv)
{
	long		samples,
				warmup,
				gap_min,
				gap_max,
				delay,
				run,
				resource,
				seed;
	int64_t		t0;
	char		sql[512];

	if (argc != 9)
	{
		fprintf(stderr, "usage: okno-latency SAMPLES WARMUP GAP_MIN_MS GAP_MAX_MS DELAY_MS RUN RESOURCE SEED\n");
		return 2;
	}
	samples = arg_long(argv[1], "SAMPLES");
	warmup = arg_long(argv[2], "WARMUP");
	gap_min = arg_long(argv[3], "GAP_MIN_MS");
	gap_max = arg_long(argv[4], "GAP_MAX_MS");
	delay = arg_long(argv[5], "DELAY_MS");
	run = arg_long(argv[6], "RUN");
	resource = arg_long(argv[7], "RESOURCE");
	seed = arg_long(argv[8], "SEED");
	if (gap_max < gap_min)
		die("GAP_MAX_MS is less than GAP_MIN_MS", NULL);
	srand48(seed);

	conn = PQconnectdb("application_name=okno-latency");
	if (PQstatus(conn) != CONNECTION_OK)
		die("could not connect", PQerrorMessage(conn));

	/* the relay's session, idle between drains or waiting in okno_wait */
	t0 = now_ns();
	for (;;)
	{
		char	   *n = query("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'okno-relay'"
							  " AND (state = 'idle' OR query LIKE '%okno_wait%')", 0, NULL, NULL);
		bool		ready = n && strcmp(n, "0") != 0;

		free(n);
		if (ready)
			break;
		if (in_eof)
			die("the relay's output ended before it was ready", NULL);
		if (now_ns() - t0 > READY_TIMEOUT_NS)
			die("the relay did not get ready within 30 s", NULL);
		pump(now_ns() + 50 * 1000000LL, false, false);
	}
	pump(now_ns() + delay * 1000000LL, false, false);

	snprintf(sql, sizeof(sql),
			 "SELECT okno_create_booking(1, 'lat.' || $1 || '.' || $2,"
			 " bench.payload(%ld, $1::bigint * 1000000 + $2::bigint)) ->> 'id'", resource);
	for (long i = 1; i <= warmup + samples; i++)
	{
		char		p_run[32],
					p_i[32];
		const char *params[2] = {p_run, p_i};
		char	   *id;
		int64_t		t_send,
					t_commit,
					t_next;
		long		gap;

		snprintf(p_run, sizeof(p_run), "%ld", run);
		snprintf(p_i, sizeof(p_i), "%ld", i);
		/* lines read while the create runs are kept, to be looked at once
		 * its id is known; lines of earlier bookings are not this one's */
		awaited = -1;
		awaited_seen_ns = 0;
		n_recent = 0;
		t_send = now_ns();
		id = query(sql, 2, params, &t_commit);
		if (id == NULL)
			die("okno_create_booking returned no id", NULL);
		/* the commit is visible to the relay a moment before the result
		 * comes back: its line may have come while the create ran */
		awaited = strtoll(id, NULL, 10);
		free(id);
		for (int k = 0; k < n_recent && awaited_seen_ns == 0; k++)
			if (recent_id[k] == awaited)
				awaited_seen_ns = recent_ns[k];
		/* the relay's output already buffered in the pipe */
		pump(now_ns(), false, true);
		if (awaited_seen_ns == 0)
			pump(t_commit + LINE_TIMEOUT_NS, false, true);
		if (awaited_seen_ns == 0 && in_eof)
			die("the relay's output ended", NULL);
		if (i > warmup)
		{
			printf("%ld\t%lld\t", i - warmup, awaited);
			print_time(t_send);
			putchar('\t');
			print_time(t_commit);
			putchar('\t');
			if (awaited_seen_ns != 0)
				print_time(awaited_seen_ns);
			printf("\t%lld\n", lines_read);
		}
		gap = gap_min + (long) (drand48() * (double) (gap_max - gap_min + 1));
		if (gap > gap_max)
			gap = gap_max;
		t_next = (awaited_seen_ns > t_commit ? awaited_seen_ns : t_commit) + gap * 1000000LL;
		awaited = 0;
		pump(t_next, false, false);
	}
	if (fflush(stdout) != 0)
		die("writing the samples failed", strerror(errno));
	PQfinish(conn);
	return 0;
}
