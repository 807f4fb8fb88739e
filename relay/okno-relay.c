/*-------------------------------------------------------------------------
 *
 * okno-relay.c
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
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/okno-relay.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libpq-fe.h"

#if defined(__GNUC__) || defined(__clang__)
#define RELAY_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define RELAY_NORETURN __attribute__((noreturn))
#else
#define RELAY_PRINTF(f, a)
#define RELAY_NORETURN
#endif

/* exit codes, documented in --help and relay/README.md */
#define EXIT_DONE			0	/* --once finished, or stopped by a signal */
#define EXIT_USAGE			1	/* bad command line */
#define EXIT_NO_CONNECTION	2	/* cannot connect at start */
#define EXIT_SERVER			3	/* okno missing, unexpected server error */
#define EXIT_OUTPUT			4	/* standard output could not be written */

#define DEFAULT_BATCH		100
#define MAX_BATCH			10000
#define DEFAULT_POLL		1.0
#define DEFAULT_SERVER_WAIT	60.0	/* --wait=server without --poll */
#define POLL_FIRST			0.01	/* first wait after a drain that found events */
#define DEFAULT_EXEC_TIMEOUT 30.0
#define MAX_SECONDS			1000000.0
#define BACKOFF_MIN			0.1 /* reconnect / retry backoff, seconds */
#define BACKOFF_MAX			5.0
#define MAX_RETRY_TIMES		10000	/* failed events whose retry we wait for */
#define NOTIFY_CHANNEL		"okno_outbox"
#define APPLICATION_NAME	"okno-relay"
#define CANCEL_GRACE		5.0 /* seconds for a cancelled okno_wait to end */
#define EMPTY_WAKE_PAUSE_MAX 1.0	/* the longest pause after wakes that found nothing */
#define METRICS_INTERVAL	1.0 /* --metrics-file: at most once a second */
#define LAG_BUCKETS			15	/* okno_relay_delivery_lag_seconds, +Inf aside */

/* how the relay waits between batches (--wait) */
typedef enum WaitMode
{
	WAIT_SERVER,				/* CALL okno_wait(ms): woken by the commit */
	WAIT_LISTEN,				/* LISTEN okno_outbox and polling */
	WAIT_POLL					/* polling only */
} WaitMode;

static const char *const wait_mode_names[] = {"server", "listen", "poll"};

/* the command line */
typedef struct RelayOptions
{
	const char *dbname;			/* NULL: libpq's defaults (PGDATABASE ...) */
	const char *schema;			/* NULL: okno's schema from pg_extension */
	int			batch;
	const char *exec_command;	/* NULL: JSON lines on stdout */
	double		exec_timeout;
	bool		once;
	double		poll;
	bool		poll_set;		/* --poll was given */
	bool		verbose;
	WaitMode	wait;
	const char *metrics_file;	/* NULL: no metrics */
	const char *subscriber;		/* NULL: the default subscriber */
} RelayOptions;

/* one drained event, pointing into the drain's PGresult */
typedef struct RelayEvent
{
	const char *id;
	const char *kind;			/* NULL for SQL NULL */
	const char *payload;		/* jsonb text; NULL for SQL NULL */
	const char *attempts;		/* NULL for SQL NULL */
} RelayEvent;

/* a growable byte buffer for the JSON line */
typedef struct LineBuffer
{
	char	   *data;
	size_t		len;
	size_t		cap;
} LineBuffer;

/* what the recipient made of one event */
typedef enum DeliveryOutcome
{
	DELIVERY_OK,				/* delivered */
	DELIVERY_FAILED,			/* refused: okno_record_failure() */
	DELIVERY_NOT_TRIED,			/* the relay could not hand it over: release */
	DELIVERY_OUTPUT_ERROR		/* standard output is gone */
} DeliveryOutcome;

/* how a statement went */
typedef enum SqlStatus
{
	SQL_OK,
	SQL_LOST,					/* the connection is gone: reconnect */
	SQL_RETRY					/* a transient error: roll back, back off */
} SqlStatus;

/*
 * What delivery transactions did, for --metrics-file: the open one's in
 * in_flight, added to committed when it commits (a transaction that does
 * not commit hands its events out again, so they do not count).
 */
typedef struct RelayCounts
{
	long long	events;			/* drained */
	long long	delivered;
	long long	failed;			/* okno_record_failure, parked included */
	long long	parked;
	long long	released;		/* handed back with okno_release */
	long long	lag_buckets[LAG_BUCKETS + 1];	/* per bucket; the last +Inf */
	long long	lag_count;
	double		lag_sum;
} RelayCounts;

/* okno_relay_delivery_lag_seconds's upper bounds */
static const double lag_bounds[LAG_BUCKETS] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60
};

static RelayOptions opts = {
	.batch = DEFAULT_BATCH,
	.exec_timeout = DEFAULT_EXEC_TIMEOUT,
	.poll = DEFAULT_POLL,
	.wait = WAIT_SERVER
};

static PGconn *conn = NULL;
static char *sql_drain = NULL;	/* BEGIN and the drain, one round trip */
static char *sql_record_failure = NULL;
static char *sql_release = NULL;
static char *sql_wait = NULL;	/* CALL okno_wait(--poll in ms) */

/* the wait in effect: --wait, but server falls back to listen without okno_wait */
static WaitMode wait_mode = WAIT_SERVER;

/* the self-pipe: signal handlers write a byte, every poll() watches it */
static int	wakeup_fds[2] = {-1, -1};
static volatile sig_atomic_t stop_signal = 0;

/* the server sent FATAL outside a query: the connection is about to end */
static bool server_closing = false;

/* monotonic times at which events we saw fail become due again */
static double *retry_times = NULL;
static int	n_retry_times = 0;

/* progress */
static bool progress_enabled = false;
static bool progress_tty = false;
static bool progress_on_line = false;	/* a \r status line is showing */
static double start_time;
static double progress_time;
static long long progress_count;
static long long n_delivered = 0;
static long long n_failed = 0;

/* --metrics-file */
static RelayCounts committed;
static RelayCounts in_flight;
static long long n_batches = 0;
static long long n_reconnects = 0;
static double last_success = 0;	/* Unix time of the last commit */
static double metrics_time = -1e9;	/* monotonic time of the last write */
static bool metrics_failing = false;	/* the last write failed (logged) */

static void usage(void);
static void usage_error(const char *fmt,...) RELAY_PRINTF(1, 2) RELAY_NORETURN;
static void parse_options(int argc, char **argv);
static int	parse_int(const char *option, const char *value, int min, int max);
static double parse_seconds(const char *option, const char *value);
static void relay_log(const char *fmt,...) RELAY_PRINTF(1, 2);
static void relay_fatal(int code, const char *fmt,...) RELAY_PRINTF(2, 3) RELAY_NORETURN;
static const char *one_line(const char *msg);
static void *relay_malloc(size_t size);
static char *relay_strdup(const char *s);
static double now_seconds(void);
static int	poll_timeout_ms(double seconds);
static void handle_signal(int signo);
static void set_fd_flags(int fd, bool cloexec, bool nonblock);
static void check_std_fds(void);
static void setup_signals(void);
static void drain_wakeups(void);
static void sleep_interruptible(double seconds);
static double unix_seconds(void);
static void notice_receiver(void *arg, const PGresult *res);
static PGconn *open_connection(char *errbuf, size_t errlen);
static SqlStatus check_result(PGresult *res, ExecStatusType want, const char *what);
static SqlStatus setup_session(void);
static void reconnect(void);
static bool poll_server(const char *what, int timeout_ms);
static bool wait_for_work(double seconds);
static void send_cancel(void);
static SqlStatus wait_in_server(bool *woken);
static int	take_notifications(void);
static void add_retry_time(double when);
static void buf_reserve(LineBuffer *buf, size_t more);
static void buf_append(LineBuffer *buf, const char *s, size_t n);
static void buf_append_json_string(LineBuffer *buf, const char *s);
static void buf_append_compact_json(LineBuffer *buf, const char *s);
static void build_line(LineBuffer *buf, const RelayEvent *ev);
static DeliveryOutcome deliver_stdout(const LineBuffer *line, char *why, size_t whylen);
static DeliveryOutcome deliver_exec(const RelayEvent *ev, const LineBuffer *line,
									char *why, size_t whylen);
static SqlStatus record_failure(const RelayEvent *ev, const char *why);
static SqlStatus release_events(PGresult *drain, int from, int to);
static SqlStatus abandon_transaction(SqlStatus st);
static SqlStatus begin_and_drain(PGresult **drain);
static SqlStatus commit_transaction(void);
static SqlStatus deliver_event(PGresult *drain, int i, bool *not_tried);
static SqlStatus run_batch(int *drained);
static SqlStatus run_exec_round(int *drained);
static void progress_report(bool final);
static void buf_printf(LineBuffer *buf, const char *fmt,...) RELAY_PRINTF(2, 3);
static void observe_lag(const char *event_id);
static void commit_counts(void);
static void metric_header(LineBuffer *buf, const char *name, const char *type,
						  const char *help);
static char *metrics_label(void);
static unsigned long long random_suffix(void);
static int	open_metrics_temp(char **tmp);
static void metrics_write(void);
static void metrics_maybe_write(void);
static void metrics_at_exit(void);

/*
 * --help
 */
static void
usage(void)
{
	printf("okno-relay delivers okno's outbox events: it drains due events with okno_drain(),\n"
		   "hands each to a recipient and commits, at least once.\n"
		   "\n"
		   "Usage:\n"
		   "  okno-relay [OPTION]...\n"
		   "\n"
		   "Options:\n"
		   "  -d, --dbname=CONNINFO      database name or connection string (default: libpq's\n"
		   "                             environment, PGHOST, PGDATABASE ...)\n"
		   "  -s, --schema=NAME          okno's schema (default: looked up in pg_extension)\n"
		   "  -b, --batch=N              events per delivery transaction, 1..%d (default %d);\n"
		   "                             with --exec every event has a transaction of its own\n"
		   "                             and N only caps how many the relay takes in a row\n"
		   "  -e, --exec=COMMAND         run COMMAND with /bin/sh -c once per event, the event's\n"
		   "                             JSON line on its stdin and OKNO_EVENT_ID, OKNO_EVENT_KIND\n"
		   "                             in its environment; exit status 0 means delivered\n"
		   "                             (default: print the JSON lines on stdout)\n"
		   "  -t, --exec-timeout=SECS    a command still running after SECS is killed (its\n"
		   "                             process group, SIGKILL) and counts as a failure\n"
		   "                             (default %g)\n"
		   "      --once                 drain until nothing is due, then exit\n"
		   "  -p, --poll=SECS            look for due events at least every SECS (default %g;\n"
		   "                             with --wait=server, the longest okno_wait, 60 by\n"
		   "                             default); with listen and poll, 10 ms after events,\n"
		   "                             doubling up to SECS\n"
		   "      --wait=MODE            how to wait between batches: server (default: CALL\n"
		   "                             okno_wait, woken by the commit that wrote an event;\n"
		   "                             listen where okno has no okno_wait), listen (LISTEN\n"
		   "                             okno_outbox, needs okno.notify on, and polling) or\n"
		   "                             poll (polling only)\n"
		   "  -S, --subscriber=NAME      deliver NAME's events (okno_subscribe; okno 0.5.0),\n"
		   "                             with its own attempts, backoff and parking\n"
		   "                             (default: the default subscriber)\n"
		   "      --metrics-file=PATH    write counters and a delivery lag histogram to PATH\n"
		   "                             in Prometheus's text format (node_exporter's textfile\n"
		   "                             collector), at most once a second and at exit\n"
		   "  -v, --verbose              a progress line on stderr (also when stderr is a terminal)\n"
		   "      --help                 show this help, then exit\n"
		   "\n"
		   "Each event is one JSON line: {\"event_id\":...,\"kind\":...,\"payload\":{...},\"attempts\":N}.\n"
		   "A failed --exec delivery is recorded with okno_record_failure() and retried after\n"
		   "okno's backoff.  With --exec each event commits on its own, so that a command that\n"
		   "hangs keeps only its own event locked: the events behind it are not taken, and\n"
		   "other relays deliver them meanwhile.  SIGINT or SIGTERM: the event in hand is\n"
		   "finished and committed (on stdout the rest of the batch is handed back with\n"
		   "okno_release()), and the relay exits 0.  A lost connection is logged and\n"
		   "re-established with backoff.\n"
		   "\n"
		   "Exit status:\n"
		   "  0  done (--once), or stopped by SIGINT or SIGTERM\n"
		   "  1  usage error\n"
		   "  2  cannot connect at start\n"
		   "  3  okno is not installed, or an unexpected server (or internal) error\n"
		   "  4  standard output could not be written\n",
		   MAX_BATCH, DEFAULT_BATCH, DEFAULT_EXEC_TIMEOUT, DEFAULT_POLL);
}

static void
usage_error(const char *fmt,...)
{
	va_list		ap;

	fputs("okno-relay: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry \"okno-relay --help\" for more information.\n", stderr);
	exit(EXIT_USAGE);
}

static int
parse_int(const char *option, const char *value, int min, int max)
{
	char	   *end;
	long		v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (errno != 0 || end == value || *end != '\0' || v < min || v > max)
		usage_error("invalid value \"%s\" for %s: an integer from %d to %d is needed",
					value, option, min, max);
	return (int) v;
}

static double
parse_seconds(const char *option, const char *value)
{
	char	   *end;
	double		v;

	errno = 0;
	v = strtod(value, &end);
	/* !(v > 0) also rejects NaN */
	if (errno != 0 || end == value || *end != '\0' || !(v > 0) || v > MAX_SECONDS)
		usage_error("invalid value \"%s\" for %s: a number of seconds greater than 0 is needed",
					value, option);
	return v;
}

static void
parse_options(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"dbname", required_argument, NULL, 'd'},
		{"schema", required_argument, NULL, 's'},
		{"batch", required_argument, NULL, 'b'},
		{"exec", required_argument, NULL, 'e'},
		{"exec-timeout", required_argument, NULL, 't'},
		{"once", no_argument, NULL, 'o'},
		{"poll", required_argument, NULL, 'p'},
		{"verbose", no_argument, NULL, 'v'},
		{"wait", required_argument, NULL, 'w'},
		{"metrics-file", required_argument, NULL, 'm'},
		{"subscriber", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	int			c;

	opterr = 0;					/* our own messages */
	while ((c = getopt_long(argc, argv, ":d:s:b:e:t:p:vS:", long_options, NULL)) != -1)
	{
		switch (c)
		{
			case 'd':
				opts.dbname = optarg;
				break;
			case 's':
				if (optarg[0] == '\0')
					usage_error("--schema needs a schema name");
				opts.schema = optarg;
				break;
			case 'b':
				opts.batch = parse_int("--batch", optarg, 1, MAX_BATCH);
				break;
			case 'e':
				if (optarg[0] == '\0')
					usage_error("--exec needs a command");
				opts.exec_command = optarg;
				break;
			case 't':
				opts.exec_timeout = parse_seconds("--exec-timeout", optarg);
				break;
			case 'o':
				opts.once = true;
				break;
			case 'p':
				opts.poll = parse_seconds("--poll", optarg);
				opts.poll_set = true;
				break;
			case 'v':
				opts.verbose = true;
				break;
			case 'w':
				if (strcmp(optarg, "server") == 0)
					opts.wait = WAIT_SERVER;
				else if (strcmp(optarg, "listen") == 0)
					opts.wait = WAIT_LISTEN;
				else if (strcmp(optarg, "poll") == 0)
					opts.wait = WAIT_POLL;
				else
					usage_error("invalid value \"%s\" for --wait: server, listen or poll is needed",
								optarg);
				break;
			case 'm':
				if (optarg[0] == '\0')
					usage_error("--metrics-file needs a path");
				opts.metrics_file = optarg;
				break;
			case 'S':
				if (optarg[0] == '\0')
					usage_error("--subscriber needs a subscriber's name");
				/* "default" is the default subscriber: the same as without */
				opts.subscriber = strcmp(optarg, "default") == 0 ? NULL : optarg;
				break;
			case 'h':
				usage();
				exit(EXIT_DONE);
			case ':':
				usage_error("option %s needs a value", argv[optind - 1]);
			default:
				if (optopt != 0)
					usage_error("unknown option -%c", optopt);
				usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument \"%s\"", argv[optind]);
	wait_mode = opts.wait;
}

/*
 * Messages: "okno-relay: " on stderr, starting a fresh line if a terminal
 * status line is showing.
 */
static void
relay_log(const char *fmt,...)
{
	va_list		ap;

	if (progress_on_line)
	{
		fputc('\n', stderr);
		progress_on_line = false;
	}
	fputs("okno-relay: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void
relay_fatal(int code, const char *fmt,...)
{
	va_list		ap;

	if (progress_on_line)
		fputc('\n', stderr);
	fputs("okno-relay: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (conn != NULL)
		PQfinish(conn);
	exit(code);
}

/*
 * A libpq message on one line: newlines and tabs become spaces, trailing
 * blanks go.  The result lives in a static buffer until the next call.
 */
static const char *
one_line(const char *msg)
{
	static char buf[1024];
	size_t		i;
	size_t		n = 0;

	if (msg == NULL)
		msg = "";
	for (i = 0; msg[i] != '\0' && n < sizeof(buf) - 1; i++)
	{
		char		ch = msg[i];

		if (ch == '\n' || ch == '\t' || ch == '\r')
			ch = ' ';
		if (ch == ' ' && (n == 0 || buf[n - 1] == ' '))
			continue;
		buf[n++] = ch;
	}
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return buf;
}

static void *
relay_malloc(size_t size)
{
	void	   *p = malloc(size);

	if (p == NULL)
		relay_fatal(EXIT_SERVER, "out of memory");
	return p;
}

static char *
relay_strdup(const char *s)
{
	size_t		n = strlen(s) + 1;
	char	   *p = relay_malloc(n);

	memcpy(p, s, n);
	return p;
}

static double
now_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		relay_fatal(EXIT_SERVER, "clock_gettime failed: %s", strerror(errno));
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* the wall clock, for timestamps others read (metrics, event ids) */
static double
unix_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		relay_fatal(EXIT_SERVER, "clock_gettime failed: %s", strerror(errno));
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* poll()'s timeout for a wait of this many seconds (rounded up) */
static int
poll_timeout_ms(double seconds)
{
	if (seconds <= 0)
		return 0;
	if (seconds > (double) (INT_MAX / 1000))
		return INT_MAX;
	return (int) (seconds * 1000.0) + 1;
}

/* ---------------------------------------------------------------- signals */

/*
 * SIGINT, SIGTERM: stop after the event in hand.  SIGCHLD: a command
 * ended.  Only async-signal-safe work: a flag and a write(2).
 */
static void
handle_signal(int signo)
{
	int			save_errno = errno;
	ssize_t		rc;

	if (signo == SIGINT || signo == SIGTERM)
		stop_signal = signo;
	rc = write(wakeup_fds[1], "", 1);	/* a full pipe is a pending wakeup */
	(void) rc;
	errno = save_errno;
}

static void
set_fd_flags(int fd, bool cloexec, bool nonblock)
{
	int			flags;

	if (cloexec)
	{
		flags = fcntl(fd, F_GETFD);
		if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0)
			relay_fatal(EXIT_SERVER, "could not set FD_CLOEXEC: %s", strerror(errno));
	}
	if (nonblock)
	{
		flags = fcntl(fd, F_GETFL);
		if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
			relay_fatal(EXIT_SERVER, "could not set O_NONBLOCK: %s", strerror(errno));
	}
}

/*
 * A closed stdin, stdout or stderr would be taken by the next descriptor
 * we open (the server's socket ...): occupy it with /dev/null.  A closed
 * stdout is the recipient itself unless --exec is given: exit 4.
 */
static void
check_std_fds(void)
{
	int			fd;

	for (fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
	{
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		if (open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY) != fd)
			exit(EXIT_SERVER);
		if (fd == STDOUT_FILENO && opts.exec_command == NULL)
			relay_fatal(EXIT_OUTPUT, "standard output is closed");
	}
}

static void
setup_signals(void)
{
	struct sigaction sa;

	if (pipe(wakeup_fds) != 0)
		relay_fatal(EXIT_SERVER, "could not create a pipe: %s", strerror(errno));
	set_fd_flags(wakeup_fds[0], true, true);
	set_fd_flags(wakeup_fds[1], true, true);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handle_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;			/* no SA_RESTART: waits end with EINTR */
	if (sigaction(SIGINT, &sa, NULL) != 0 ||
		sigaction(SIGTERM, &sa, NULL) != 0)
		relay_fatal(EXIT_SERVER, "sigaction failed: %s", strerror(errno));
	sa.sa_flags = SA_NOCLDSTOP;
	if (sigaction(SIGCHLD, &sa, NULL) != 0)
		relay_fatal(EXIT_SERVER, "sigaction failed: %s", strerror(errno));

	/* a reader that went away is a write error (EPIPE), not a death */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPIPE, &sa, NULL) != 0)
		relay_fatal(EXIT_SERVER, "sigaction failed: %s", strerror(errno));
}

static void
drain_wakeups(void)
{
	char		buf[64];

	while (read(wakeup_fds[0], buf, sizeof(buf)) > 0)
		;
}

/* sleep, but not past a SIGINT or SIGTERM */
static void
sleep_interruptible(double seconds)
{
	double		deadline = now_seconds() + seconds;
	double		left;
	struct pollfd pfd;

	while (!stop_signal && (left = deadline - now_seconds()) > 0)
	{
		pfd.fd = wakeup_fds[0];
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, poll_timeout_ms(left)) < 0 && errno != EINTR)
			relay_fatal(EXIT_SERVER, "poll failed: %s", strerror(errno));
		drain_wakeups();
	}
}

/* ------------------------------------------------------------- the server */

/*
 * Server messages outside a query: notices, warnings, and the FATAL a
 * backend sends before it closes the connection (pg_terminate_backend,
 * shutdown).  The last means the open transaction is lost already.
 */
static void
notice_receiver(void *arg, const PGresult *res)
{
	const char *severity = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);

	(void) arg;
	if (severity != NULL &&
		(strcmp(severity, "FATAL") == 0 || strcmp(severity, "PANIC") == 0))
		server_closing = true;
	relay_log("server: %s", one_line(PQresultErrorMessage(res)));
}

/*
 * Connect without blocking signals out: PQconnectStartParams and
 * PQconnectPoll, with the self-pipe in every poll().  NULL on failure
 * (message in errbuf) or when a stop signal came.
 */
static PGconn *
open_connection(char *errbuf, size_t errlen)
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
	values[2] = opts.dbname;
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
		pfd[1].fd = wakeup_fds[0];
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
	server_closing = false;
	PQsetNoticeReceiver(c, notice_receiver, NULL);
	return c;
}

/*
 * Judge a result; frees it unless it is SQL_OK.  A lost connection and a
 * transient error (serialization failure, deadlock, cancel, read-only,
 * out of resources) are the caller's to handle; anything else is fatal
 * (exit 3).
 */
static SqlStatus
check_result(PGresult *res, ExecStatusType want, const char *what)
{
	const char *state;
	const char *msg;
	char		buf[1100];

	if (res != NULL && PQresultStatus(res) == want)
		return SQL_OK;

	state = (res != NULL) ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	msg = (res != NULL) ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	if (msg == NULL && res != NULL && PQresultErrorMessage(res)[0] != '\0')
		msg = PQresultErrorMessage(res);
	if (msg == NULL)
		msg = PQerrorMessage(conn);
	snprintf(buf, sizeof(buf), "%s", one_line(msg));

	if (PQstatus(conn) == CONNECTION_BAD ||
		(state == NULL && (res == NULL || PQresultStatus(res) == PGRES_FATAL_ERROR)) ||
		(state != NULL && (strncmp(state, "08", 2) == 0 || strncmp(state, "57P0", 4) == 0)))
	{
		relay_log("lost the connection to the server (%s): %s", what, buf);
		PQclear(res);
		return SQL_LOST;
	}
	if (state != NULL &&
		(strncmp(state, "40", 2) == 0 ||	/* serialization, deadlock */
		 strncmp(state, "53", 2) == 0 ||	/* insufficient resources */
		 strcmp(state, "57014") == 0 || /* query canceled */
		 strcmp(state, "55P03") == 0 || /* lock not available */
		 strcmp(state, "25006") == 0))	/* read-only transaction */
	{
		relay_log("%s failed, will retry: %s (SQLSTATE %s)", what, buf, state);
		PQclear(res);
		return SQL_RETRY;
	}
	if (state != NULL)
		relay_log("%s failed: %s (SQLSTATE %s)", what, buf, state);
	else if (res != NULL && PQresultStatus(res) != PGRES_FATAL_ERROR)
		relay_log("%s: unexpected result %s", what, PQresStatus(PQresultStatus(res)));
	else
		relay_log("%s failed: %s", what, buf);
	PQclear(res);
	PQfinish(conn);
	conn = NULL;
	exit(EXIT_SERVER);
}

/*
 * On a fresh connection: find okno's schema, check that it has the 0.2.0
 * functions, build the qualified statements, and get ready to
 * wait: with --wait=server, if okno has okno_wait; otherwise (and with
 * --wait=listen) LISTEN.  Missing okno is fatal (exit 3).
 */
static SqlStatus
setup_session(void)
{
	/* as named in messages, and as looked up (types qualified) */
	static const char *const functions[] = {
		"okno_drain(integer)",
		"okno_record_failure(uuid,text)",
		"okno_release(uuid)"
	};
	static const char *const subscriber_functions[] = {
		"okno_drain(integer,text)",
		"okno_record_failure(uuid,text,text)",
		"okno_release(uuid,text)"
	};
	static const char *const signatures[] = {
		"okno_drain(pg_catalog.int4)",
		"okno_record_failure(pg_catalog.uuid,pg_catalog.text)",
		"okno_release(pg_catalog.uuid)"
	};
	static const char *const subscriber_signatures[] = {
		"okno_drain(pg_catalog.int4,pg_catalog.text)",
		"okno_record_failure(pg_catalog.uuid,pg_catalog.text,pg_catalog.text)",
		"okno_release(pg_catalog.uuid,pg_catalog.text)"
	};
	PGresult   *res;
	SqlStatus	st;
	char	   *schema;
	char	   *quoted;
	char	   *subscriber = NULL;	/* ", 'name'" or "" */
	char	   *wait_args;		/* ", NULL, 'name'" or "" */
	char		signature[600];
	const char *param[1];
	size_t		len;
	int			i;

	/*
	 * The session is left as it is: no SET, no session setting, no
	 * session lock, no prepared statement, no LISTEN but with
	 * --wait=listen.  Through a pooler in transaction mode (PgBouncer's
	 * pool_mode = transaction) the server session is lent to other clients
	 * between our transactions, and a session setting would stay with it:
	 * set_config('search_path', 'pg_catalog', false) here made every
	 * client's unqualified okno_create_booking() fail on the connections
	 * the relay had used.  So every statement names the schema of every
	 * function, operator and type it uses (pg_catalog's included), and the
	 * delivery transactions pin search_path with SET LOCAL, which ends with
	 * them (sql_drain).  application_name and client_encoding are startup
	 * parameters, which a pooler tracks per client.
	 */
	if (opts.schema != NULL)
		schema = relay_strdup(opts.schema);
	else
	{
		res = PQexec(conn,
					 "SELECT n.nspname FROM pg_catalog.pg_extension e"
					 " JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace"
					 " WHERE e.extname OPERATOR(pg_catalog.=) 'okno'");
		if ((st = check_result(res, PGRES_TUPLES_OK, "looking up okno's schema")) != SQL_OK)
			return st;
		if (PQntuples(res) != 1)
		{
			PQclear(res);
			relay_fatal(EXIT_SERVER, "okno is not installed in database \"%s\" (CREATE EXTENSION okno CASCADE)",
						PQdb(conn));
		}
		schema = relay_strdup(PQgetvalue(res, 0, 0));
		PQclear(res);
	}

	quoted = PQescapeIdentifier(conn, schema, strlen(schema));
	if (quoted == NULL)
		relay_fatal(EXIT_SERVER, "could not quote schema name \"%s\": %s",
					schema, one_line(PQerrorMessage(conn)));

	/* okno 0.2.0's functions (0.5.0's for a subscriber), in that schema */
	for (i = 0; i < (int) (sizeof(functions) / sizeof(functions[0])); i++)
	{
		snprintf(signature, sizeof(signature), "%s.%s", quoted,
				 opts.subscriber != NULL ? subscriber_signatures[i] : signatures[i]);
		param[0] = signature;
		res = PQexecParams(conn, "SELECT pg_catalog.to_regprocedure($1) IS NOT NULL",
						   1, NULL, param, NULL, NULL, 0);
		if ((st = check_result(res, PGRES_TUPLES_OK, "looking up okno's functions")) != SQL_OK)
		{
			PQfreemem(quoted);
			free(schema);
			return st;
		}
		if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, 0), "t") != 0)
		{
			PQclear(res);
			relay_fatal(EXIT_SERVER,
						"okno is not installed in schema \"%s\" of database \"%s\", or it is older than %s (no %s)",
						schema, PQdb(conn), opts.subscriber != NULL ? "0.5.0" : "0.2.0",
						opts.subscriber != NULL ? subscriber_functions[i] : functions[i]);
		}
		PQclear(res);
	}

	/* the subscriber's name as a literal argument (the server checks it) */
	if (opts.subscriber != NULL)
	{
		char	   *literal = PQescapeLiteral(conn, opts.subscriber, strlen(opts.subscriber));

		if (literal == NULL)
			relay_fatal(EXIT_SERVER, "could not quote subscriber name \"%s\": %s",
						opts.subscriber, one_line(PQerrorMessage(conn)));
		subscriber = relay_malloc(strlen(literal) + 3);
		sprintf(subscriber, ", %s", literal);
		wait_args = relay_malloc(strlen(literal) + 9);
		sprintf(wait_args, ", NULL, %s", literal);
		PQfreemem(literal);
	}
	else
	{
		subscriber = relay_strdup("");
		wait_args = relay_strdup("");
	}

	free(sql_drain);
	free(sql_record_failure);
	free(sql_release);
	len = strlen(quoted) + strlen(subscriber) + 250;
	sql_drain = relay_malloc(len);
	snprintf(sql_drain, len,
			 "BEGIN; SET LOCAL search_path = pg_catalog;"
			 " SELECT event_id, kind, payload, attempts FROM %s.okno_drain(%d%s)",
			 quoted, opts.exec_command != NULL ? 1 : opts.batch, subscriber);
	len = strlen(quoted) + strlen(subscriber) + 300;
	sql_record_failure = relay_malloc(len);
	snprintf(sql_record_failure, len,
			 "SELECT f.attempts, f.parked_at IS NOT NULL,"
			 " pg_catalog.date_part('epoch', f.available_at OPERATOR(pg_catalog.-) pg_catalog.clock_timestamp())"
			 " FROM %s.okno_record_failure($1::pg_catalog.uuid, $2::pg_catalog.text%s) AS f",
			 quoted, subscriber);
	sql_release = relay_malloc(len);
	snprintf(sql_release, len,
			 "SELECT pg_catalog.count(*) FILTER (WHERE r)"
			 " FROM pg_catalog.unnest($1::pg_catalog.uuid[]) AS u(id),"
			 " LATERAL %s.okno_release(u.id%s) AS r",
			 quoted, subscriber);
	free(subscriber);

	/* --once never waits */
	if (opts.once)
	{
		free(wait_args);
		PQfreemem(quoted);
		free(schema);
		return SQL_OK;
	}

	if (opts.wait == WAIT_SERVER)
	{
		WaitMode	previous = wait_mode;
		char		outbox[600];
		char		delivery[600];
		char		subscribers[600];
		const char *params[5];
		const char *how;

		/*
		 * what the wait reads: due events and who holds them (xmax), and for
		 * a subscriber its rows and what it has not copied
		 */
		snprintf(signature, sizeof(signature), "%s.okno_wait(pg_catalog.int4,pg_catalog.bool%s)",
				 quoted, opts.subscriber != NULL ? ",pg_catalog.text" : "");
		snprintf(outbox, sizeof(outbox), "%s.outbox", quoted);
		snprintf(delivery, sizeof(delivery), "%s.okno_delivery", quoted);
		snprintf(subscribers, sizeof(subscribers), "%s.okno_subscriber", quoted);
		params[0] = signature;
		params[1] = outbox;
		params[2] = delivery;
		params[3] = subscribers;
		params[4] = opts.subscriber != NULL ? "t" : "f";
		res = PQexecParams(conn,
						   "SELECT CASE WHEN pg_catalog.to_regprocedure($1) IS NULL THEN 'missing'"
						   " WHEN NOT pg_catalog.has_function_privilege(pg_catalog.to_regprocedure($1), 'EXECUTE')"
						   "   OR CASE WHEN $5::pg_catalog.bool"
						   "      THEN NOT pg_catalog.has_column_privilege($2, 'created_xid', 'SELECT')"
						   "        OR NOT pg_catalog.has_table_privilege($3, 'SELECT')"
						   "        OR NOT pg_catalog.has_table_privilege($4, 'SELECT')"
						   "      ELSE NOT pg_catalog.has_column_privilege($2, 'xmax', 'SELECT') END"
						   "   THEN 'denied'"
						   " ELSE 'ok' END",
						   5, NULL, params, NULL, NULL, 0);
		if ((st = check_result(res, PGRES_TUPLES_OK, "looking up okno_wait")) != SQL_OK)
		{
			free(wait_args);
			PQfreemem(quoted);
			free(schema);
			return st;
		}
		how = (PQntuples(res) == 1) ? PQgetvalue(res, 0, 0) : "missing";
		wait_mode = (strcmp(how, "ok") == 0) ? WAIT_SERVER : WAIT_LISTEN;
		if (wait_mode == WAIT_LISTEN && previous == WAIT_SERVER)
		{
			if (strcmp(how, "denied") == 0)
				relay_log("this role may not use okno_wait in schema \"%s\" (EXECUTE on it and %s: docs/PRIVILEGES.md): waiting with LISTEN " NOTIFY_CHANNEL " and polling instead",
						  schema, opts.subscriber != NULL ?
						  "SELECT on okno_delivery, okno_subscriber and outbox.created_xid" :
						  "SELECT (xmax) on outbox");
			else
				relay_log("okno in schema \"%s\" has no okno_wait (an older okno): waiting with LISTEN " NOTIFY_CHANNEL " and polling instead",
						  schema);
		}
		else if (wait_mode == WAIT_SERVER && previous == WAIT_LISTEN)
			relay_log("okno in schema \"%s\" has okno_wait now: waiting in the server", schema);
		PQclear(res);
	}

	/*
	 * The timeout in ms: --poll, rounded, 1 at least (0 would not wait); 60 s
	 * without --poll, since a commit ends the wait anyway and an idle relay
	 * should cost nothing.
	 */
	free(sql_wait);
	len = strlen(quoted) + strlen(wait_args) + 100;
	sql_wait = relay_malloc(len);
	{
		double		wait_ms = (opts.poll_set ? opts.poll : DEFAULT_SERVER_WAIT) * 1000.0;

		snprintf(sql_wait, len, "CALL %s.okno_wait(%.0f%s)",
				 quoted, wait_ms < 1.0 ? 1.0 : wait_ms, wait_args);
	}
	free(wait_args);
	PQfreemem(quoted);
	free(schema);

	if (wait_mode != WAIT_LISTEN)
		return SQL_OK;
	res = PQexec(conn, "LISTEN " NOTIFY_CHANNEL);
	return check_result(res, PGRES_COMMAND_OK, "LISTEN");
}

/*
 * The connection is gone: connect again with backoff (0.1 s doubling to
 * 5 s) until it works or a stop signal comes.
 */
static void
reconnect(void)
{
	double		delay = BACKOFF_MIN;
	char		errbuf[1024];

	if (conn != NULL)
	{
		PQfinish(conn);
		conn = NULL;
	}
	relay_log("reconnecting");
	for (;;)
	{
		if (stop_signal)
			return;
		conn = open_connection(errbuf, sizeof(errbuf));
		if (conn != NULL)
		{
			SqlStatus	st = setup_session();

			if (st == SQL_OK)
			{
				relay_log("reconnected");
				n_reconnects++;
				return;
			}
			PQfinish(conn);
			conn = NULL;
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
 * Consume the notifications libpq has; the number that came from other
 * sessions (our own commits wake nobody: what they change is known).
 */
static int
take_notifications(void)
{
	PGnotify   *n;
	int			count = 0;
	int			self = PQbackendPID(conn);

	while ((n = PQnotifies(conn)) != NULL)
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
static void
add_retry_time(double when)
{
	if (retry_times == NULL)
		retry_times = relay_malloc(sizeof(double) * MAX_RETRY_TIMES);
	if (n_retry_times < MAX_RETRY_TIMES)
		retry_times[n_retry_times++] = when;
}

/*
 * One poll() on the server's socket and the self-pipe, for timeout_ms (-1:
 * no limit); false (logged) if the connection has no socket any more.
 */
static bool
poll_server(const char *what, int timeout_ms)
{
	struct pollfd pfd[2];

	pfd[0].fd = PQsocket(conn);
	if (pfd[0].fd < 0)
	{
		relay_log("lost the connection to the server (%s): no socket", what);
		return false;
	}
	pfd[0].events = POLLIN;
	pfd[0].revents = 0;
	pfd[1].fd = wakeup_fds[0];
	pfd[1].events = POLLIN;
	pfd[1].revents = 0;
	if (poll(pfd, 2, timeout_ms) < 0 && errno != EINTR)
		relay_fatal(EXIT_SERVER, "poll failed: %s", strerror(errno));
	drain_wakeups();
	return true;
}

/*
 * Idle: wait for a notification from another session, for the retry time
 * of an event we saw fail, for the given number of seconds, or for a stop
 * signal.  False if the connection was lost.
 */
static bool
wait_for_work(double seconds)
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
		if (!PQconsumeInput(conn) || PQstatus(conn) == CONNECTION_BAD ||
			server_closing)
		{
			relay_log("lost the connection to the server (waiting): %s",
					  server_closing ? "the server closed the session" :
					  one_line(PQerrorMessage(conn)));
			return false;
		}
		if (take_notifications() > 0)
			return true;

		now = now_seconds();
		for (i = 0; i < n_retry_times;)
		{
			if (retry_times[i] <= now)
			{
				retry_times[i] = retry_times[--n_retry_times];
				due = true;
			}
			else
			{
				if (retry_times[i] < until)
					until = retry_times[i];
				i++;
			}
		}
		if (due || now >= until)
			return true;

		progress_report(false);
		metrics_maybe_write();
		if (opts.metrics_file != NULL && until - now > METRICS_INTERVAL)
			until = now + METRICS_INTERVAL; /* then look again */
		if (!poll_server("waiting", poll_timeout_ms(until - now)))
			return false;
	}
}

/*
 * Ask the server to cancel the statement in progress (okno_wait).
 */
static void
send_cancel(void)
{
	PGcancel   *cancel = PQgetCancel(conn);
	char		errbuf[256];

	if (cancel == NULL)
		return;
	if (!PQcancel(cancel, errbuf, sizeof(errbuf)))
		relay_log("could not cancel okno_wait: %s", one_line(errbuf));
	PQfreeCancel(cancel);
}

/*
 * --wait=server, idle: CALL okno_wait(--poll in ms), sent with
 * PQsendQuery, and poll() on the connection and the self-pipe until it
 * returns.  *woken is okno_wait's answer: an event may be due (a commit
 * wrote one, a delayed one came due, it was due already); false at its
 * timeout.  The server ends the wait at lock_timeout (55P03) or
 * statement_timeout (57014) if one is shorter: a timeout too.  A stop
 * signal cancels it; the relay waits up to CANCEL_GRACE seconds for the
 * answer.  Other errors go through check_result (a lost connection:
 * SQL_LOST, ...).
 */
static SqlStatus
wait_in_server(bool *woken)
{
	static bool timeout_logged = false;
	PGresult   *res;
	PGresult   *first = NULL;
	bool		cancelled = false;
	double		cancel_deadline = 0;
	const char *state;
	SqlStatus	st;

	*woken = false;
	if (stop_signal)
		return SQL_OK;
	if (!PQsendQuery(conn, sql_wait))
		return check_result(NULL, PGRES_TUPLES_OK, "okno_wait");

	for (;;)
	{
		int			timeout_ms = -1;

		if (stop_signal && !cancelled)
		{
			send_cancel();
			cancelled = true;
			cancel_deadline = now_seconds() + CANCEL_GRACE;
		}
		if (!PQconsumeInput(conn))
			return check_result(NULL, PGRES_TUPLES_OK, "okno_wait");
		if (!PQisBusy(conn))
			break;
		if (cancelled)
		{
			double		left = cancel_deadline - now_seconds();

			if (left <= 0)
			{
				relay_log("okno_wait did not end within %g s of the cancel", CANCEL_GRACE);
				return SQL_LOST;
			}
			timeout_ms = poll_timeout_ms(left);
		}
		else if (opts.metrics_file != NULL)
		{
			metrics_maybe_write();
			timeout_ms = (int) (METRICS_INTERVAL * 1000.0);
		}

		if (!poll_server("okno_wait", timeout_ms))
			return SQL_LOST;
	}

	/* the CALL's result, then the end of the query (NULL) */
	while ((res = PQgetResult(conn)) != NULL)
	{
		if (first == NULL)
			first = res;
		else
			PQclear(res);
	}

	state = (first != NULL) ? PQresultErrorField(first, PG_DIAG_SQLSTATE) : NULL;
	if (first != NULL && PQresultStatus(first) == PGRES_FATAL_ERROR && state != NULL &&
		PQstatus(conn) == CONNECTION_OK &&
		(strcmp(state, "55P03") == 0 || strcmp(state, "57014") == 0))
	{
		/* lock_timeout, statement_timeout, our cancel or someone's: a timeout */
		if (!cancelled && opts.verbose && !timeout_logged)
		{
			relay_log("okno_wait ended early (%s, SQLSTATE %s): taken for a timeout",
					  one_line(PQresultErrorField(first, PG_DIAG_MESSAGE_PRIMARY)), state);
			timeout_logged = true;
		}
		PQclear(first);
		return SQL_OK;
	}
	if ((st = check_result(first, PGRES_TUPLES_OK, "okno_wait")) != SQL_OK)
		return st;
	*woken = (PQntuples(first) == 1 && PQnfields(first) >= 1 &&
			  strcmp(PQgetvalue(first, 0, 0), "t") == 0);
	PQclear(first);
	return SQL_OK;
}

/* ---------------------------------------------------------- the JSON line */

static void
buf_reserve(LineBuffer *buf, size_t more)
{
	size_t		need = buf->len + more + 1;

	if (need > buf->cap)
	{
		size_t		cap = (buf->cap == 0) ? 1024 : buf->cap;
		char	   *p;

		while (cap < need)
			cap *= 2;
		p = realloc(buf->data, cap);
		if (p == NULL)
			relay_fatal(EXIT_SERVER, "out of memory");
		buf->data = p;
		buf->cap = cap;
	}
}

static void
buf_append(LineBuffer *buf, const char *s, size_t n)
{
	buf_reserve(buf, n);
	memcpy(buf->data + buf->len, s, n);
	buf->len += n;
	buf->data[buf->len] = '\0';
}

/* a JSON string literal; bytes >= 0x80 (UTF-8) pass unchanged */
static void
buf_append_json_string(LineBuffer *buf, const char *s)
{
	const unsigned char *p;
	char		esc[8];

	buf_append(buf, "\"", 1);
	for (p = (const unsigned char *) s; *p != '\0'; p++)
	{
		switch (*p)
		{
			case '"':
				buf_append(buf, "\\\"", 2);
				break;
			case '\\':
				buf_append(buf, "\\\\", 2);
				break;
			case '\n':
				buf_append(buf, "\\n", 2);
				break;
			case '\r':
				buf_append(buf, "\\r", 2);
				break;
			case '\t':
				buf_append(buf, "\\t", 2);
				break;
			case '\b':
				buf_append(buf, "\\b", 2);
				break;
			case '\f':
				buf_append(buf, "\\f", 2);
				break;
			default:
				if (*p < 0x20)
				{
					snprintf(esc, sizeof(esc), "\\u%04x", (unsigned int) *p);
					buf_append(buf, esc, 6);
				}
				else
					buf_append(buf, (const char *) p, 1);
				break;
		}
	}
	buf_append(buf, "\"", 1);
}

/*
 * jsonb's text without the blanks PostgreSQL puts after ':' and ','.
 * Blanks inside strings stay; jsonb escapes every control character in a
 * string, so a raw blank outside one is always a separator.
 */
static void
buf_append_compact_json(LineBuffer *buf, const char *s)
{
	const char *p;
	const char *run = s;
	bool		in_string = false;

	for (p = s; *p != '\0'; p++)
	{
		if (in_string)
		{
			if (*p == '\\' && p[1] != '\0')
				p++;
			else if (*p == '"')
				in_string = false;
		}
		else if (*p == '"')
			in_string = true;
		else if (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		{
			buf_append(buf, run, p - run);
			run = p + 1;
		}
	}
	buf_append(buf, run, p - run);
}

/* {"event_id":"...","kind":"...","payload":{...},"attempts":N}\n */
static void
build_line(LineBuffer *buf, const RelayEvent *ev)
{
	buf->len = 0;
	buf_append(buf, "{\"event_id\":", 12);
	buf_append_json_string(buf, ev->id);
	buf_append(buf, ",\"kind\":", 8);
	if (ev->kind != NULL)
		buf_append_json_string(buf, ev->kind);
	else
		buf_append(buf, "null", 4);
	buf_append(buf, ",\"payload\":", 11);
	if (ev->payload != NULL)
		buf_append_compact_json(buf, ev->payload);
	else
		buf_append(buf, "null", 4);
	buf_append(buf, ",\"attempts\":", 12);
	if (ev->attempts != NULL)
		buf_append(buf, ev->attempts, strlen(ev->attempts));
	else
		buf_append(buf, "null", 4);
	buf_append(buf, "}\n", 2);
}

/* ------------------------------------------------------------- recipients */

/*
 * The line on stdout with write(2) (no stdio buffer to lose), complete
 * before we return, i.e. before the commit.
 */
static DeliveryOutcome
deliver_stdout(const LineBuffer *line, char *why, size_t whylen)
{
	size_t		done = 0;

	while (done < line->len)
	{
		ssize_t		n = write(STDOUT_FILENO, line->data + done, line->len - done);

		if (n > 0)
			done += (size_t) n;
		else if (n < 0 && errno == EINTR)
			continue;
		else
		{
			snprintf(why, whylen, "could not write to standard output: %s",
					 n < 0 ? strerror(errno) : "nothing written");
			return DELIVERY_OUTPUT_ERROR;
		}
	}
	return DELIVERY_OK;
}

/*
 * Run --exec for one event: /bin/sh -c COMMAND in a process group of its
 * own, the line on its stdin, OKNO_EVENT_ID and OKNO_EVENT_KIND in its
 * environment.  Writing the line and waiting for the exit share one
 * deadline; past it the whole group gets SIGKILL.  A stop signal does not
 * cut the command short: the event in hand is finished.
 */
static DeliveryOutcome
deliver_exec(const RelayEvent *ev, const LineBuffer *line, char *why, size_t whylen)
{
	int			in[2];
	pid_t		pid;
	int			status = 0;
	size_t		written = 0;
	double		deadline;
	bool		timed_out = false;

	if (pipe(in) != 0)
	{
		snprintf(why, whylen, "could not create a pipe: %s", strerror(errno));
		return DELIVERY_NOT_TRIED;
	}
	set_fd_flags(in[0], true, false);
	set_fd_flags(in[1], true, true);

	pid = fork();
	if (pid < 0)
	{
		snprintf(why, whylen, "could not fork: %s", strerror(errno));
		close(in[0]);
		close(in[1]);
		return DELIVERY_NOT_TRIED;
	}
	if (pid == 0)
	{
		/* the child: single-threaded parent, so setenv is fine here */
		struct sigaction sa;
		sigset_t	none;

		setpgid(0, 0);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGPIPE, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGCHLD, &sa, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(in[0], STDIN_FILENO) < 0)
			_exit(127);
		if (setenv("OKNO_EVENT_ID", ev->id, 1) != 0 ||
			setenv("OKNO_EVENT_KIND", ev->kind != NULL ? ev->kind : "", 1) != 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", opts.exec_command, (char *) NULL);
		_exit(127);
	}

	/* also here, so that killing the group cannot race the child's setpgid */
	(void) setpgid(pid, pid);
	close(in[0]);

	deadline = now_seconds() + opts.exec_timeout;
	for (;;)
	{
		struct pollfd pfd[2];
		int			npfd = 1;
		pid_t		r;
		double		now;

		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			relay_fatal(EXIT_SERVER, "waitpid failed: %s", strerror(errno));

		now = now_seconds();
		if (now >= deadline)
		{
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0)
			{
				if (errno != EINTR)
					relay_fatal(EXIT_SERVER, "waitpid failed: %s", strerror(errno));
			}
			timed_out = true;
			break;
		}

		/* feed the line; a command that does not read it may exit anyway */
		while (in[1] >= 0 && written < line->len)
		{
			ssize_t		n = write(in[1], line->data + written, line->len - written);

			if (n > 0)
				written += (size_t) n;
			else if (n < 0 && errno == EINTR)
				continue;
			else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			else
			{
				close(in[1]);	/* EPIPE: the command closed its stdin */
				in[1] = -1;
			}
		}
		if (in[1] >= 0 && written == line->len)
		{
			close(in[1]);
			in[1] = -1;
		}

		pfd[0].fd = wakeup_fds[0];
		pfd[0].events = POLLIN;
		pfd[0].revents = 0;
		if (in[1] >= 0)
		{
			pfd[1].fd = in[1];
			pfd[1].events = POLLOUT;
			pfd[1].revents = 0;
			npfd = 2;
		}
		if (poll(pfd, npfd, poll_timeout_ms(deadline - now)) < 0 && errno != EINTR)
			relay_fatal(EXIT_SERVER, "poll failed: %s", strerror(errno));
		drain_wakeups();
	}
	if (in[1] >= 0)
		close(in[1]);

	if (timed_out)
	{
		snprintf(why, whylen, "timed out after %g s", opts.exec_timeout);
		return DELIVERY_FAILED;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return DELIVERY_OK;
	if (WIFEXITED(status))
		snprintf(why, whylen, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(why, whylen, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(why, whylen, "ended with wait status %d", status);
	return DELIVERY_FAILED;
}

/* ------------------------------------------------------------ the batch */

/*
 * okno_record_failure(event, why) in the delivery transaction; remember
 * when the event is due again.
 */
static SqlStatus
record_failure(const RelayEvent *ev, const char *why)
{
	const char *params[2];
	PGresult   *res;
	SqlStatus	st;

	params[0] = ev->id;
	params[1] = why;
	res = PQexecParams(conn, sql_record_failure, 2, NULL, params, NULL, NULL, 0);
	if ((st = check_result(res, PGRES_TUPLES_OK, "okno_record_failure")) != SQL_OK)
		return st;
	if (PQntuples(res) != 1)
	{
		PQclear(res);
		relay_fatal(EXIT_SERVER, "okno_record_failure returned no row for event %s", ev->id);
	}
	in_flight.failed++;
	if (strcmp(PQgetvalue(res, 0, 1), "t") == 0)
	{
		in_flight.parked++;
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
		if (!opts.once && wait_mode != WAIT_SERVER)
			add_retry_time(now_seconds() + (delay > 0 ? delay : 0.0));
	}
	PQclear(res);
	return SQL_OK;
}

/*
 * Hand events from..to-1 of the drain back with okno_release(), in one
 * statement.
 */
static SqlStatus
release_events(PGresult *drain, int from, int to)
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
	res = PQexecParams(conn, sql_release, 1, NULL, params, NULL, NULL, 0);
	free(arr.data);
	if ((st = check_result(res, PGRES_TUPLES_OK, "okno_release")) != SQL_OK)
		return st;
	released = (PQntuples(res) == 1) ? strtol(PQgetvalue(res, 0, 0), NULL, 10) : -1;
	if (released > 0)
		in_flight.released += released;
	if (released != to - from)
		relay_log("okno_release handed back %ld of %d events", released, to - from);
	else if (opts.verbose)
		relay_log("handed back %d undelivered events of the batch", to - from);
	PQclear(res);
	return SQL_OK;
}

/* after a failed statement inside the delivery transaction */
static SqlStatus
abandon_transaction(SqlStatus st)
{
	PGresult   *res;

	if (st == SQL_RETRY)
	{
		res = PQexec(conn, "ROLLBACK");
		if (check_result(res, PGRES_COMMAND_OK, "ROLLBACK") != SQL_OK)
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
begin_and_drain(PGresult **drain)
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
	memset(&in_flight, 0, sizeof(in_flight));
	res = PQexec(conn, sql_drain);
	if ((st = check_result(res, PGRES_TUPLES_OK, "okno_drain")) != SQL_OK)
		return abandon_transaction(st);
	if (PQnfields(res) != 4)
	{
		int			nfields = PQnfields(res);

		PQclear(res);
		relay_fatal(EXIT_SERVER, "okno_drain returned %d columns, 4 expected", nfields);
	}
	in_flight.events = PQntuples(res);
	*drain = res;
	return SQL_OK;
}

/* COMMIT the delivery transaction */
static SqlStatus
commit_transaction(void)
{
	PGresult   *res;
	SqlStatus	st;

	res = PQexec(conn, "COMMIT");
	if ((st = check_result(res, PGRES_COMMAND_OK, "COMMIT")) != SQL_OK)
		return st;
	if (strcmp(PQcmdStatus(res), "COMMIT") != 0)
	{
		relay_log("the delivery transaction did not commit (%s)", PQcmdStatus(res));
		PQclear(res);
		return SQL_RETRY;
	}
	PQclear(res);
	commit_counts();
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
deliver_event(PGresult *drain, int i, bool *not_tried)
{
	static LineBuffer line = {NULL, 0, 0};
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
	build_line(&line, &ev);

	why[0] = '\0';
	if (opts.exec_command != NULL)
		outcome = deliver_exec(&ev, &line, why, sizeof(why));
	else
		outcome = deliver_stdout(&line, why, sizeof(why));

	switch (outcome)
	{
		case DELIVERY_OK:
			n_delivered++;
			in_flight.delivered++;
			observe_lag(ev.id);
			break;
		case DELIVERY_FAILED:
			if ((st = record_failure(&ev, why)) != SQL_OK)
				return st;
			n_failed++;
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
			res = PQexec(conn, "ROLLBACK");
			if (PQresultStatus(res) != PGRES_COMMAND_OK)
				relay_log("ROLLBACK failed: %s", one_line(PQerrorMessage(conn)));
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
run_batch(int *drained)
{
	PGresult   *drain;
	SqlStatus	st;
	bool		not_tried = false;
	int			n;
	int			i;

	*drained = 0;
	if ((st = begin_and_drain(&drain)) != SQL_OK)
		return st;
	n = PQntuples(drain);
	*drained = n;

	for (i = 0; i < n; i++)
	{
		if (stop_signal)
			break;
		if ((st = deliver_event(drain, i, &not_tried)) != SQL_OK)
		{
			PQclear(drain);
			return abandon_transaction(st);
		}
		if (not_tried)
			break;
		progress_report(false);

		/*
		 * A terminated backend says so at once; no point in handing out the
		 * rest of a batch that can no longer commit.
		 */
		if (!PQconsumeInput(conn) || PQstatus(conn) == CONNECTION_BAD ||
			server_closing)
		{
			relay_log("lost the connection to the server (delivering): %s",
					  server_closing ? "the server closed the session" :
					  one_line(PQerrorMessage(conn)));
			PQclear(drain);
			return SQL_LOST;
		}
	}

	/* a stop signal or an event not handed over: hand the rest back */
	if (i < n && (st = release_events(drain, i, n)) != SQL_OK)
	{
		PQclear(drain);
		return abandon_transaction(st);
	}
	PQclear(drain);

	if ((st = commit_transaction()) != SQL_OK)
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
run_exec_round(int *drained)
{
	PGresult   *drain;
	SqlStatus	st;
	bool		not_tried = false;

	*drained = 0;
	while (*drained < opts.batch && !stop_signal)
	{
		if ((st = begin_and_drain(&drain)) != SQL_OK)
			return st;
		if (PQntuples(drain) == 0)
		{
			/* COMMIT, not ROLLBACK: an abort makes okno's next drain rescan */
			PQclear(drain);
			return commit_transaction();
		}
		(*drained)++;

		st = deliver_event(drain, 0, &not_tried);
		if (st == SQL_OK && not_tried)
			st = release_events(drain, 0, 1);
		PQclear(drain);
		if (st != SQL_OK)
			return abandon_transaction(st);
		if ((st = commit_transaction()) != SQL_OK)
			return st;
		if (not_tried)
			return SQL_RETRY;
		progress_report(false);
	}
	return SQL_OK;
}

/* ---------------------------------------------------------------- progress */

/*
 * "delivered N, failed M, R events/s" on stderr, at most once a second
 * and only when something happened; \r on a terminal, lines otherwise.
 */
static void
progress_report(bool final)
{
	double		now;
	long long	count = n_delivered + n_failed;
	double		rate;
	char		line[200];

	if (!progress_enabled)
		return;
	now = now_seconds();
	if (!final && (now - progress_time < 1.0 || count == progress_count))
		return;
	if (final)
		rate = (now > start_time) ? (double) count / (now - start_time) : 0.0;
	else
		rate = (double) (count - progress_count) / (now - progress_time);
	snprintf(line, sizeof(line), "okno-relay: delivered %lld, failed %lld, %.0f events/s",
			 n_delivered, n_failed, rate);
	if (progress_tty)
	{
		fprintf(stderr, "\r%-70s", line);
		progress_on_line = true;
		if (final)
		{
			fputc('\n', stderr);
			progress_on_line = false;
		}
	}
	else
		fprintf(stderr, "%s\n", line);
	progress_time = now;
	progress_count = count;
}

/* ----------------------------------------------------------------- metrics */

static void
buf_printf(LineBuffer *buf, const char *fmt,...)
{
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		relay_fatal(EXIT_SERVER, "vsnprintf failed");
	buf_reserve(buf, (size_t) n);
	va_start(ap, fmt);
	vsnprintf(buf->data + buf->len, (size_t) n + 1, fmt, ap);
	va_end(ap);
	buf->len += (size_t) n;
}

/*
 * okno_relay_delivery_lag_seconds: now minus the time the event was
 * written, which a UUID version 7 event id carries in its first 48 bits
 * (Unix milliseconds).  Ids of another version (events the course's
 * service wrote before okno served its tables) are not observed.
 */
static void
observe_lag(const char *event_id)
{
	unsigned long long ms = 0;
	double		lag;
	int			i;

	if (opts.metrics_file == NULL)
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
	if (lag < 0)
		lag = 0;				/* clocks apart */
	for (i = 0; i < LAG_BUCKETS && lag > lag_bounds[i]; i++)
		;
	in_flight.lag_buckets[i]++;
	in_flight.lag_count++;
	in_flight.lag_sum += lag;
}

/* the delivery transaction committed: what it did counts */
static void
commit_counts(void)
{
	int			i;

	last_success = unix_seconds();
	if (in_flight.events == 0)
		return;
	n_batches++;
	committed.events += in_flight.events;
	committed.delivered += in_flight.delivered;
	committed.failed += in_flight.failed;
	committed.parked += in_flight.parked;
	committed.released += in_flight.released;
	for (i = 0; i <= LAG_BUCKETS; i++)
		committed.lag_buckets[i] += in_flight.lag_buckets[i];
	committed.lag_count += in_flight.lag_count;
	committed.lag_sum += in_flight.lag_sum;
	memset(&in_flight, 0, sizeof(in_flight));
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
metrics_label(void)
{
	const char *name = opts.subscriber != NULL ? opts.subscriber : "default";
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
open_metrics_temp(char **tmp)
{
	size_t		len = strlen(opts.metrics_file) + 64;
	int			fd = -1;
	int			attempt;

	*tmp = relay_malloc(len);
	for (attempt = 0; attempt < 8; attempt++)
	{
		snprintf(*tmp, len, "%s.tmp.%ld.%016llx", opts.metrics_file,
				 (long) getpid(), random_suffix());
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	return fd;
}

/*
 * --metrics-file: Prometheus's text exposition format, written to a new
 * temporary file beside PATH (open_metrics_temp) and renamed over PATH, so
 * that a reader (node_exporter's textfile collector) never sees half a
 * file; rename replaces PATH itself, a symlink included, and follows
 * nothing.  Every series has the label subscriber="NAME".  A failure is
 * logged once (and its end), and the relay goes on.
 */
static void
metrics_write(void)
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
	LineBuffer	buf = {NULL, 0, 0};
	char	   *tmp;
	char	   *label = metrics_label();
	size_t		done = 0;
	long long	cumulative = 0;
	int			fd;
	int			i;
	bool		failed = false;
	int			save_errno = 0;

	values[0] = committed.delivered;
	values[1] = committed.failed;
	values[2] = committed.parked;
	values[3] = committed.released;
	values[4] = n_batches;
	values[5] = n_reconnects;
	for (i = 0; i < 6; i++)
	{
		metric_header(&buf, counters[i].name, "counter", counters[i].help);
		buf_printf(&buf, "%s{%s} %lld\n", counters[i].name, label, values[i]);
	}
	metric_header(&buf, "okno_relay_last_success_timestamp_seconds", "gauge",
				  "Unix time of the last delivery transaction that committed, empty ones included (0: none yet).");
	buf_printf(&buf, "okno_relay_last_success_timestamp_seconds{%s} %.3f\n", label, last_success);
	metric_header(&buf, "okno_relay_delivery_lag_seconds", "histogram",
				  "Seconds from an event's write (its UUID v7 event_id) to its delivery.");
	for (i = 0; i <= LAG_BUCKETS; i++)
	{
		cumulative += committed.lag_buckets[i];
		if (i < LAG_BUCKETS)
			buf_printf(&buf, "okno_relay_delivery_lag_seconds_bucket{%s,le=\"%g\"} %lld\n",
					   label, lag_bounds[i], cumulative);
		else
			buf_printf(&buf, "okno_relay_delivery_lag_seconds_bucket{%s,le=\"+Inf\"} %lld\n",
					   label, cumulative);
	}
	buf_printf(&buf, "okno_relay_delivery_lag_seconds_sum{%s} %.6f\n", label, committed.lag_sum);
	buf_printf(&buf, "okno_relay_delivery_lag_seconds_count{%s} %lld\n", label, committed.lag_count);
	free(label);

	fd = open_metrics_temp(&tmp);
	if (fd < 0)
	{
		failed = true;
		save_errno = errno;
	}
	while (!failed && done < buf.len)
	{
		ssize_t		n = write(fd, buf.data + done, buf.len - done);

		if (n > 0)
			done += (size_t) n;
		else if (n < 0 && errno == EINTR)
			continue;
		else
		{
			failed = true;
			save_errno = (n < 0) ? errno : ENOSPC;
		}
	}
	if (fd >= 0 && close(fd) != 0 && !failed)
	{
		failed = true;
		save_errno = errno;
	}
	if (!failed && rename(tmp, opts.metrics_file) != 0)
	{
		failed = true;
		save_errno = errno;
	}
	if (failed)
	{
		if (fd >= 0)
			(void) unlink(tmp);
		if (!metrics_failing)
			relay_log("could not write the metrics file \"%s\": %s",
					  opts.metrics_file, strerror(save_errno));
		metrics_failing = true;
	}
	else if (metrics_failing)
	{
		relay_log("the metrics file \"%s\" is written again", opts.metrics_file);
		metrics_failing = false;
	}
	free(tmp);
	free(buf.data);
	metrics_time = now_seconds();
}

/* --metrics-file, if a second has passed since the last write */
static void
metrics_maybe_write(void)
{
	if (opts.metrics_file != NULL && now_seconds() - metrics_time >= METRICS_INTERVAL)
		metrics_write();
}

/* at exit, whatever the exit status (atexit) */
static void
metrics_at_exit(void)
{
	if (opts.metrics_file != NULL)
		metrics_write();
}

int
main(int argc, char **argv)
{
	char		errbuf[1024];
	SqlStatus	st;
	double		retry_delay = BACKOFF_MIN;
	double		idle_wait = POLL_FIRST;
	bool		woken = false;	/* the last okno_wait said an event may be due */
	int			empty_wakes = 0;	/* ... and the drain after it found none */

	parse_options(argc, argv);
	check_std_fds();
	setup_signals();
	if (opts.metrics_file != NULL && atexit(metrics_at_exit) != 0)
		relay_fatal(EXIT_SERVER, "atexit failed");

	progress_tty = isatty(STDERR_FILENO);
	progress_enabled = opts.verbose || progress_tty;
	start_time = progress_time = now_seconds();
	progress_count = 0;

	conn = open_connection(errbuf, sizeof(errbuf));
	if (conn == NULL)
	{
		if (stop_signal)
			exit(EXIT_DONE);
		relay_fatal(EXIT_NO_CONNECTION, "cannot connect to the database: %s", errbuf);
	}
	st = setup_session();
	if (st == SQL_LOST)
		relay_fatal(EXIT_NO_CONNECTION, "lost the connection to the database at start");
	if (st == SQL_RETRY)
		relay_fatal(EXIT_SERVER, "cannot set up the session");
	if (opts.verbose)
	{
		if (opts.exec_command != NULL)
			relay_log("connected to database \"%s\", running --exec per event, one event per transaction, %d in a row",
					  PQdb(conn), opts.batch);
		else
			relay_log("connected to database \"%s\", batches of %d, JSON lines on stdout",
					  PQdb(conn), opts.batch);
		if (!opts.once)
			relay_log("waiting between batches: %s", wait_mode_names[wait_mode]);
	}
	metrics_maybe_write();

	while (!stop_signal)
	{
		int			drained = 0;

		if (conn == NULL)
		{
			reconnect();
			woken = false;
			continue;
		}

		if (opts.exec_command != NULL)
			st = run_exec_round(&drained);
		else
			st = run_batch(&drained);
		metrics_maybe_write();
		if (st == SQL_LOST)
		{
			reconnect();
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
		if (drained == opts.batch)
			continue;			/* a full batch or round: there may be more */
		if (opts.once)
		{
			if (drained == 0)
				break;			/* nothing due any more */
			continue;
		}
		progress_report(false);

		if (wait_mode == WAIT_SERVER)
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
				double		most = (opts.poll < EMPTY_WAKE_PAUSE_MAX) ? opts.poll : EMPTY_WAKE_PAUSE_MAX;
				int			i;

				for (i = 1; i < empty_wakes && pause < most; i++)
					pause *= 2;
				sleep_interruptible(pause < most ? pause : most);
				if (stop_signal)
					break;
			}
			st = wait_in_server(&woken);
			if (st == SQL_LOST)
			{
				reconnect();
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
		else if (idle_wait < opts.poll)
			idle_wait *= 2;
		if (!wait_for_work(idle_wait < opts.poll ? idle_wait : opts.poll))
			reconnect();
	}

	progress_report(true);
	if (opts.verbose && stop_signal)
		relay_log("stopped by signal %d", (int) stop_signal);
	if (conn != NULL)
		PQfinish(conn);
	return EXIT_DONE;
}
