/*-------------------------------------------------------------------------
 *
 * util.c
 *	  Memory, clocks, poll() timeouts and the growable buffer.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/util.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "relay.h"


void *
relay_malloc(size_t size)
{
	void	   *p = malloc(size);

	if (p == NULL)
		relay_fatal(EXIT_SERVER, "out of memory");
	return p;
}

char *
relay_strdup(const char *s)
{
	size_t		n = strlen(s) + 1;
	char	   *p = relay_malloc(n);

	memcpy(p, s, n);
	return p;
}

double
now_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		relay_fatal(EXIT_SERVER, "clock_gettime failed: %s", strerror(errno));
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* the wall clock, for timestamps others read (metrics, event ids) */
double
unix_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		relay_fatal(EXIT_SERVER, "clock_gettime failed: %s", strerror(errno));
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* poll()'s timeout for a wait of this many seconds (rounded up) */
int
poll_timeout_ms(double seconds)
{
	if (seconds <= 0)
		return 0;
	if (seconds > (double) (INT_MAX / 1000))
		return INT_MAX;
	return (int) (seconds * 1000.0) + 1;
}

void
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

void
buf_append(LineBuffer *buf, const char *s, size_t n)
{
	buf_reserve(buf, n);
	memcpy(buf->data + buf->len, s, n);
	buf->len += n;
	buf->data[buf->len] = '\0';
}


void
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
