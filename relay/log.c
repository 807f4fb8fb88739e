/*-------------------------------------------------------------------------
 *
 * log.c
 *	  Messages on stderr, and fatal exits.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/log.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relay.h"

/*
 * The one Relay, for the messages and exits of helpers that are not handed
 * it (a buffer out of memory, a clock that fails): a message first ends a
 * status line on the terminal, and a fatal error closes the connection.
 * Set once, by main, before anything can fail.
 */
static Relay *log_relay = NULL;

/*
 * a password given on the command line, as parsed and as written: never
 * printed (options.c)
 */
#define MAX_SECRETS 4
static char *log_secrets[MAX_SECRETS];
static int	n_secrets = 0;

void
log_init(Relay *r)
{
	log_relay = r;
}

void
log_hide(const char *secret)
{
	if (secret != NULL && secret[0] != '\0' && n_secrets < MAX_SECRETS)
		log_secrets[n_secrets++] = relay_strdup(secret);
}

/* where the first secret in s is, and how long it is; NULL: none */
static const char *
find_secret(const char *s, size_t *len)
{
	const char *first = NULL;
	const char *hit;
	int			i;

	for (i = 0; i < n_secrets; i++)
		if ((hit = strstr(s, log_secrets[i])) != NULL && (first == NULL || hit < first))
		{
			first = hit;
			*len = strlen(log_secrets[i]);
		}
	return first;
}

/* a message on stderr, "okno-relay: " first, the secret hidden */
static void emit(const char *fmt, va_list ap) RELAY_PRINTF(1, 0);

static void
emit(const char *fmt, va_list ap)
{
	char		buf[4096];
	const char *p = buf;
	const char *hit;
	size_t		len = 0;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fputs("okno-relay: ", stderr);
	while ((hit = find_secret(p, &len)) != NULL)
	{
		fwrite(p, 1, (size_t) (hit - p), stderr);
		fputs("********", stderr);
		p = hit + len;
	}
	fputs(p, stderr);
	fputc('\n', stderr);
}

/*
 * Messages: "okno-relay: " on stderr, starting a fresh line if a terminal
 * status line is showing.
 */
void
relay_log(const char *fmt,...)
{
	Relay	   *r = log_relay;
	va_list		ap;

	if (r->progress.on_line)
	{
		fputc('\n', stderr);
		r->progress.on_line = false;
	}
	va_start(ap, fmt);
	emit(fmt, ap);
	va_end(ap);
}

void
relay_fatal(int code, const char *fmt,...)
{
	Relay	   *r = log_relay;
	va_list		ap;

	if (r->progress.on_line)
		fputc('\n', stderr);
	va_start(ap, fmt);
	emit(fmt, ap);
	va_end(ap);
	if (r->conn != NULL)
		PQfinish(r->conn);
	exit(code);
}

/*
 * A libpq message on one line: newlines and tabs become spaces, trailing
 * blanks go.  The result lives in a static buffer until the next call.
 */
const char *
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
