/*-------------------------------------------------------------------------
 *
 * options.c
 *	  The command line, and --help.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/options.c
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relay.h"

static void usage(void);
static void usage_error(const char *fmt,...) RELAY_PRINTF(1, 2) RELAY_NORETURN;
static int	parse_int(const char *option, const char *value, int min, int max);
static double parse_seconds(const char *option, const char *value);
static WaitMode parse_wait(const char *value);
static void unknown_option(const char *arg) RELAY_NORETURN;

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
		   "      --statement-timeout=SECS  a statement the server has not answered after\n"
		   "                             SECS is cancelled, and the connection taken for lost\n"
		   "                             5 s later (default %g; okno_wait: --poll plus %g)\n"
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
		   MAX_BATCH, DEFAULT_BATCH, DEFAULT_EXEC_TIMEOUT, DEFAULT_STATEMENT_TIMEOUT,
		   WAIT_GRACE, DEFAULT_POLL);
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

/*
 * Seconds: decimal digits with an optional fraction ("0.5", "30"), from
 * MIN_SECONDS (1 ms) to MAX_SECONDS; strtod alone would take "0x10" for
 * 16 and "1e-9" for a nanosecond.
 */
static double
parse_seconds(const char *option, const char *value)
{
	const char *p = value;
	char	   *end;
	double		v;

	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.' && (p > value || (p[1] >= '0' && p[1] <= '9')))
	{
		p++;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	errno = 0;
	v = strtod(value, &end);
	if (p == value || *p != '\0' || end != p || errno != 0 ||
		v < MIN_SECONDS || v > MAX_SECONDS)
		usage_error("invalid value \"%s\" for %s: a number of seconds from %g to %g is needed, such as 0.5",
					value, option, MIN_SECONDS, MAX_SECONDS);
	return v;
}

/* overwrite the characters from p to end (exclusive) with 'x' */
static void
blot(char *p, const char *end)
{
	while (p < end)
		*p++ = 'x';
}

/*
 * The password in a connection string or URI given on the command line:
 * kept (log.c hides it in every message, libpq's included) and overwritten
 * in argv, so that ps and /proc/PID/cmdline do not show it: a key=value's
 * value (quoted or not; a URI's query parameter alike) and a URI's
 * user:password@.  A password
 * belongs in ~/.pgpass or PGPASSFILE (relay/README.md).
 */
static void
hide_password(char *conninfo)
{
	PQconninfoOption *parsed = PQconninfoParse(conninfo, NULL);
	PQconninfoOption *o;
	char	   *p;
	char	   *q;

	for (o = parsed; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, "password") == 0 && o->val != NULL && o->val[0] != '\0')
			log_hide(o->val);
	PQconninfoFree(parsed);

	/* password = value, password='quoted \' value', ?password=value& */
	for (p = conninfo; (p = strstr(p, "password")) != NULL;)
	{
		q = p + strlen("password");
		while (isspace((unsigned char) *q))
			q++;
		if (*q++ != '=')
		{
			p += strlen("password");
			continue;
		}
		while (isspace((unsigned char) *q))
			q++;
		p = q;
		if (*q == '\'')
		{
			for (q++; *q != '\0' && *q != '\''; q++)
				if (*q == '\\' && q[1] != '\0')
					q++;
			blot(p + 1, q);
		}
		else
		{
			for (; *q != '\0' && !isspace((unsigned char) *q) && *q != '&'; q++)
				if (*q == '\\' && q[1] != '\0')
					q++;
			blot(p, q);
		}
		p = q;
	}

	/*
	 * postgresql://user:password@host: as written (percent-encoded), in the
	 * authority alone (before the path's or the query's first / or ?)
	 */
	if ((p = strstr(conninfo, "://")) != NULL)
	{
		size_t		authority = strcspn(p + 3, "/?");
		char	   *at = memchr(p + 3, '@', authority);
		char	   *colon = memchr(p + 3, ':', authority);

		if (at != NULL && colon != NULL && colon < at && at - colon > 1)
		{
			char	   *raw = relay_malloc((size_t) (at - colon));

			memcpy(raw, colon + 1, (size_t) (at - colon - 1));
			raw[at - colon - 1] = '\0';
			log_hide(raw);
			free(raw);
			blot(colon + 1, at);
		}
	}
}

/* the long options; getopt_long's short ones are in parse_options */
static const struct option long_options[] = {
	{"dbname", required_argument, NULL, 'd'},
	{"schema", required_argument, NULL, 's'},
	{"batch", required_argument, NULL, 'b'},
	{"exec", required_argument, NULL, 'e'},
	{"exec-timeout", required_argument, NULL, 't'},
	{"statement-timeout", required_argument, NULL, 'T'},
	{"once", no_argument, NULL, 'o'},
	{"poll", required_argument, NULL, 'p'},
	{"verbose", no_argument, NULL, 'v'},
	{"wait", required_argument, NULL, 'w'},
	{"metrics-file", required_argument, NULL, 'm'},
	{"subscriber", required_argument, NULL, 'S'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0}
};

/* --wait's value */
static WaitMode
parse_wait(const char *value)
{
	if (strcmp(value, "server") == 0)
		return WAIT_SERVER;
	if (strcmp(value, "listen") == 0)
		return WAIT_LISTEN;
	if (strcmp(value, "poll") == 0)
		return WAIT_POLL;
	usage_error("invalid value \"%s\" for --wait: server, listen or poll is needed",
				value);
}

/*
 * The option getopt_long did not take, arg as given: a long option that
 * takes no value given one (--help=x: getopt names the option by its short
 * letter, so the argument itself is looked at), another unknown long
 * option, or an unknown short one (getopt's optopt).
 */
static void
unknown_option(const char *arg)
{
	if (strncmp(arg, "--", 2) == 0)
	{
		const char *name = arg + 2;
		const char *eq = strchr(name, '=');
		const struct option *o;

		for (o = long_options; eq != NULL && o->name != NULL; o++)
			if (o->has_arg == no_argument && strlen(o->name) == (size_t) (eq - name) &&
				strncmp(o->name, name, (size_t) (eq - name)) == 0)
				usage_error("option --%s takes no value: %s", o->name, arg);
		usage_error("unknown option %s", arg);
	}
	if (optopt != 0)
		usage_error("unknown option -%c", optopt);
	usage_error("unknown option %s", arg);
}

void
parse_options(RelayOptions *opts, int argc, char **argv)
{
	int			c;

	memset(opts, 0, sizeof(*opts));
	opts->batch = DEFAULT_BATCH;
	opts->exec_timeout = DEFAULT_EXEC_TIMEOUT;
	opts->statement_timeout = DEFAULT_STATEMENT_TIMEOUT;
	opts->poll = DEFAULT_POLL;
	opts->wait = WAIT_SERVER;

	opterr = 0;					/* our own messages */
	while ((c = getopt_long(argc, argv, ":d:s:b:e:t:p:vS:", long_options, NULL)) != -1)
	{
		switch (c)
		{
			case 'd':
				opts->dbname = relay_strdup(optarg);
				hide_password(optarg);
				break;
			case 's':
				if (optarg[0] == '\0')
					usage_error("--schema needs a schema name");
				opts->schema = optarg;
				break;
			case 'b':
				opts->batch = parse_int("--batch", optarg, 1, MAX_BATCH);
				break;
			case 'e':
				if (optarg[0] == '\0')
					usage_error("--exec needs a command");
				opts->exec_command = optarg;
				break;
			case 't':
				opts->exec_timeout = parse_seconds("--exec-timeout", optarg);
				break;
			case 'T':
				opts->statement_timeout = parse_seconds("--statement-timeout", optarg);
				break;
			case 'o':
				opts->once = true;
				break;
			case 'p':
				opts->poll = parse_seconds("--poll", optarg);
				opts->poll_set = true;
				break;
			case 'v':
				opts->verbose = true;
				break;
			case 'w':
				opts->wait = parse_wait(optarg);
				break;
			case 'm':
				if (optarg[0] == '\0')
					usage_error("--metrics-file needs a path");
				opts->metrics_file = optarg;
				break;
			case 'S':
				if (optarg[0] == '\0')
					usage_error("--subscriber needs a subscriber's name");
				/* "default" is the default subscriber: the same as without */
				opts->subscriber = strcmp(optarg, "default") == 0 ? NULL : optarg;
				break;
			case 'h':
				usage();
				exit(EXIT_DONE);
			case ':':
				usage_error("option %s needs a value", argv[optind - 1]);
			default:
				unknown_option(argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument \"%s\"", argv[optind]);
}
