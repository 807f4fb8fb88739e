/*-------------------------------------------------------------------------
 *
 * relay.h
 *	  okno-relay's types, its one state (Relay) and what each file owns.
 *
 * The files, one duty each:
 *
 *	main.c		the program's life: options, signals, connect, then the
 *				loop of drain, deliver, report and wait
 *	options.c	the command line and --help
 *	log.c		messages on stderr, fatal exits
 *	util.c		memory, clocks, poll() timeouts, the growable buffer
 *	signals.c	signal handlers, the self-pipe, interruptible sleep
 *	statement.c	running one statement with a deadline
 *	result.c	judging a result: fine, retry, lost connection, or fatal
 *	connect.c	connecting, reconnecting, backing off
 *	session.c	a fresh connection's set-up: okno's schema and functions,
 *				the qualified statements, how to wait
 *	wait.c		waiting between batches: okno_wait, LISTEN, polling
 *	batch.c		the delivery transaction: drain, deliver, record
 *				failures, release, commit
 *	json.c		the JSON line of an event
 *	output.c	standard output as the recipient: whole lines, synced
 *				before the commit on a file, locked on a pipe
 *	deliver.c	the --exec recipient: its process, environment and
 *				timeout
 *	progress.c	the progress line on stderr
 *	metrics.c	--metrics-file: counters, the lag histogram, the file,
 *				written at exit too
 *
 * All the relay's state is one Relay, made by main (static, since the
 * metrics file is written at exit, after main returns) and passed down.
 * Only what a signal handler touches lives in file-level variables
 * (signals.c); log.c keeps a pointer to the Relay for the messages and
 * exits of helpers that are not handed it (log_init), and metrics.c one for
 * the metrics file written at exit (metrics_at_every_exit).
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/relay.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef OKNO_RELAY_H
#define OKNO_RELAY_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

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
#define MIN_SECONDS			0.001
#define BACKOFF_MIN			0.1 /* reconnect / retry backoff, seconds */
#define BACKOFF_MAX			5.0
#define START_ATTEMPTS		5	/* a transient error at start: tries in all */
#define MAX_RETRY_TIMES		10000	/* failed events whose retry we wait for */
#define LOST_LIMIT			3	/* delivery transactions of an event lost in a
								 * row before it is charged a failed attempt */
#define NOTIFY_CHANNEL		"okno_outbox"
#define APPLICATION_NAME	"okno-relay"
#define CANCEL_GRACE		5.0 /* seconds for a cancelled statement to end */
#define DEFAULT_STATEMENT_TIMEOUT 60.0	/* a statement unanswered this long is cancelled */
#define WAIT_GRACE			10.0	/* okno_wait: its timeout plus this, then cancelled */
#define EMPTY_WAKE_PAUSE_MAX 1.0	/* the longest pause after wakes that found nothing */
#define METRICS_INTERVAL	1.0 /* --metrics-file: at most once a second */
#define LAG_BUCKETS			15	/* okno_relay_delivery_lag_seconds, +Inf aside */
#define LAG_FUTURE_SLACK	60.0	/* an id's time ahead of the relay's clock: 0 lag */
#define LAG_PAST_LIMIT		(10 * 365.25 * 86400.0) /* an id older: forged, not observed */

/* how the relay waits between batches (--wait) */
typedef enum WaitMode
{
	WAIT_SERVER,				/* CALL okno_wait(ms): woken by the commit */
	WAIT_LISTEN,				/* LISTEN okno_outbox and polling */
	WAIT_POLL					/* polling only */
} WaitMode;

/* the command line */
typedef struct RelayOptions
{
	const char *dbname;			/* NULL: libpq's defaults (PGDATABASE ...) */
	const char *schema;			/* NULL: okno's schema from pg_extension */
	int			batch;
	const char *exec_command;	/* NULL: JSON lines on stdout */
	double		exec_timeout;
	double		statement_timeout;	/* the server's answer to a statement */
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
	DELIVERY_OUTPUT_ERROR,		/* standard output is gone */
	DELIVERY_STOPPED			/* a stop signal came while standard output
								 * would not take the line: release */
} DeliveryOutcome;

/* standard output as the recipient (output.c) */
typedef struct RelayOutput
{
	bool		regular;		/* a regular file: synced before each commit */
	bool		lock;			/* not one: a record lock around each line */
	bool		unsynced;		/* lines written since the last sync */
} RelayOutput;

/* how a statement went */
typedef enum SqlStatus
{
	SQL_OK,
	SQL_LOST,					/* the connection is gone: reconnect */
	SQL_RETRY,					/* a transient error: roll back, back off */
	SQL_UNREADABLE				/* the server is fine but its answer could not
								 * be read: a value with no UTF-8 form, or
								 * libpq out of memory (Relay.unreadable) */
} SqlStatus;

/* why the last answer was SQL_UNREADABLE (result.c) */
typedef struct RelayUnreadable
{
	bool		encoding;		/* no UTF-8 form (22P05, 22021); else libpq's
								 * own error, out of memory most likely */
	char		why[600];
} RelayUnreadable;

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


/* the progress line (progress.c) and the counts it shows */
typedef struct RelayProgress
{
	bool		enabled;
	bool		tty;
	bool		on_line;		/* a \r status line is showing */
	double		start_time;
	double		time;			/* of the last report */
	long long	count;			/* delivered + failed at the last report */
	long long	delivered;
	long long	failed;
} RelayProgress;

/* --metrics-file (metrics.c) */
typedef struct RelayMetrics
{
	RelayCounts committed;
	RelayCounts in_flight;
	long long	batches;
	long long	reconnects;
	double		last_success;	/* Unix time of the last commit */
	double		written_at;		/* monotonic time of the last write */
	bool		failing;		/* the last write failed (logged) */
} RelayMetrics;

/*
 * Events whose delivery transaction was lost (the connection ended before
 * its COMMIT): each with how many times in a row, forgotten when a
 * delivery transaction with events commits (batch.c)
 */
typedef struct LostEvents
{
	char		(*ids)[40];
	int		   *times;
	int			n;
} LostEvents;

/* the pace of the main loop (main.c, wait.c, connect.c) */
typedef struct RelayPace
{
	double		retry_delay;	/* the next back-off after SQL_RETRY */
	int			lost_streak;	/* connections lost since a drain worked */
	int			read_only;		/* read-only servers met since a drain worked */
	double		idle_wait;		/* listen and poll: the next idle wait */
	bool		woken;			/* the last okno_wait said an event may be due */
	int			empty_wakes;	/* ... and the drain after it found none */
} RelayPace;

/* the relay: everything it knows between one statement and the next */
typedef struct Relay
{
	RelayOptions opts;
	PGconn	   *conn;			/* NULL: to be (re)connected */

	/* the statements, built by setup_session for the connection's okno */
	char	   *sql_drain;		/* BEGIN and the drain, one round trip */
	char	   *sql_drain_ids;	/* ... of one event's id and attempts */
	char	   *sql_event;		/* an event's kind and payload, by id */
	char	   *sql_record_failure;
	char	   *sql_release;
	char	   *sql_wait;		/* CALL okno_wait(--poll in ms) */
	double		wait_seconds;	/* ... that many seconds */

	/* the wait in effect: --wait, but server falls back to listen without okno_wait */
	WaitMode	wait_mode;

	/* the server sent FATAL outside a query: the connection is about to end */
	bool		server_closing;
	RelayUnreadable unreadable;

	/* monotonic times at which events we saw fail become due again */
	double	   *retry_times;
	int			n_retry_times;

	bool		wait_timeout_logged;	/* okno_wait ended early: said once */
	LineBuffer	line;			/* the JSON line of the event in hand */
	RelayOutput output;

	LostEvents	lost;
	RelayPace	pace;
	RelayProgress progress;
	RelayMetrics metrics;
} Relay;

/* options.c */
extern void parse_options(RelayOptions *opts, int argc, char **argv);

/* log.c */
extern void log_init(Relay *r);
extern void log_hide(const char *secret);
extern void relay_log(const char *fmt,...) RELAY_PRINTF(1, 2);
extern void relay_fatal(int code, const char *fmt,...) RELAY_PRINTF(2, 3) RELAY_NORETURN;
extern const char *one_line(const char *msg);

/* util.c */
extern void *relay_malloc(size_t size);
extern char *relay_strdup(const char *s);
extern double now_seconds(void);
extern double unix_seconds(void);
extern int	poll_timeout_ms(double seconds);
extern void buf_reserve(LineBuffer *buf, size_t more);
extern void buf_append(LineBuffer *buf, const char *s, size_t n);
extern void buf_printf(LineBuffer *buf, const char *fmt,...) RELAY_PRINTF(2, 3);

/* signals.c */
extern volatile sig_atomic_t stop_signal;
extern void setup_signals(void);
extern void check_std_fds(Relay *r);
extern void set_fd_flags(int fd, bool cloexec, bool nonblock);
extern int	wakeup_fd(void);
extern void drain_wakeups(void);
extern void reap_orphans(void);
extern void sleep_interruptible(double seconds);

/* statement.c */
extern void send_cancel(Relay *r, const char *what);
extern bool poll_server(Relay *r, const char *what, int timeout_ms);
extern bool await_answer(Relay *r, const char *what, double timeout, bool cancel_on_stop);
extern PGresult *run_statement(Relay *r, const char *sql, int nparams,
							   const char *const *params, const char *what);

/* result.c */
extern SqlStatus check_result(Relay *r, PGresult *res, ExecStatusType want, const char *what);
extern SqlStatus check_answer(Relay *r, PGresult *res, ExecStatusType want, const char *what,
							  bool may_be_unreadable);

/* connect.c */
extern PGconn *open_connection(Relay *r, char *errbuf, size_t errlen);
extern void connect_at_start(Relay *r);
extern void reconnect(Relay *r);
extern void recover(Relay *r, SqlStatus st);

/* session.c */
extern SqlStatus setup_session(Relay *r);

/* wait.c */
extern void add_retry_time(Relay *r, double when);
extern bool wait_for_work(Relay *r, double seconds);
extern SqlStatus wait_in_server(Relay *r, bool *woken);
extern void wait_between_batches(Relay *r, int drained);

/* batch.c */
extern SqlStatus drain_due(Relay *r, int *drained);

/* json.c */
extern void build_line(LineBuffer *buf, const RelayEvent *ev);

/* output.c */
extern void output_start(Relay *r);
extern DeliveryOutcome output_line(Relay *r, const char *data, size_t len,
								   char *why, size_t whylen);
extern bool output_sync(Relay *r, char *why, size_t whylen);

/* deliver.c */
extern DeliveryOutcome deliver_exec(Relay *r, const RelayEvent *ev, const LineBuffer *line,
									char *why, size_t whylen);

/* progress.c */
extern void progress_start(Relay *r);
extern void progress_report(Relay *r, bool final);

/* metrics.c */
extern void observe_lag(Relay *r, const char *event_id);
extern void commit_counts(Relay *r);
extern void metrics_write(Relay *r);
extern bool metrics_at_every_exit(Relay *r);
extern void metrics_maybe_write(Relay *r);

#endif							/* OKNO_RELAY_H */
