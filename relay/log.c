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

#include "relay.h"

/*
 * The one Relay, for the messages and exits of helpers that are not handed
 * it (a buffer out of memory, a clock that fails): a message first ends a
 * status line on the terminal, and a fatal error closes the connection.
 * Set once, by main, before anything can fail.
 */
static Relay *log_relay = NULL;

void
log_init(Relay *r)
{
	log_relay = r;
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
	fputs("okno-relay: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
relay_fatal(int code, const char *fmt,...)
{
	Relay	   *r = log_relay;
	va_list		ap;

	if (r->progress.on_line)
		fputc('\n', stderr);
	fputs("okno-relay: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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
