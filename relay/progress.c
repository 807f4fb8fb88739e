/*-------------------------------------------------------------------------
 *
 * progress.c
 *	  The progress line on stderr.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/progress.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <unistd.h>

#include "relay.h"

/* progress on stderr with --verbose, or when stderr is a terminal */
void
progress_start(Relay *r)
{
	r->progress.tty = isatty(STDERR_FILENO);
	r->progress.enabled = r->opts.verbose || r->progress.tty;
	r->progress.start_time = r->progress.time = now_seconds();
	r->progress.count = 0;
}

/*
 * "delivered N, failed M, R events/s" on stderr, at most once a second
 * and only when something happened; \r on a terminal, lines otherwise.
 */
void
progress_report(Relay *r, bool final)
{
	double		now;
	long long	count = r->progress.delivered + r->progress.failed;
	double		rate;
	char		line[200];

	if (!r->progress.enabled)
		return;
	now = now_seconds();
	if (!final && (now - r->progress.time < 1.0 || count == r->progress.count))
		return;
	if (final)
		rate = (now > r->progress.start_time) ? (double) count / (now - r->progress.start_time) : 0.0;
	else
		rate = (double) (count - r->progress.count) / (now - r->progress.time);
	snprintf(line, sizeof(line), "okno-relay: delivered %lld, failed %lld, %.0f events/s",
			 r->progress.delivered, r->progress.failed, rate);
	if (r->progress.tty)
	{
		fprintf(stderr, "\r%-70s", line);
		r->progress.on_line = true;
		if (final)
		{
			fputc('\n', stderr);
			r->progress.on_line = false;
		}
	}
	else
		fprintf(stderr, "%s\n", line);
	r->progress.time = now;
	r->progress.count = count;
}
