/*-------------------------------------------------------------------------
 *
 * output.c
 *	  Standard output as the recipient: whole lines, on disk before the
 *	  commit when it is a file, one writer at a time when it is a pipe.
 *
 * An event written to standard output counts as delivered when its
 * delivery transaction commits, so what was written must outlive
 * whatever can happen after the COMMIT:
 *
 *   - a regular file (okno-relay ... >> events.jsonl): the batch's lines
 *     are synced (fdatasync) before the COMMIT, once per batch, so a power
 *     cut or a kernel panic after it loses nothing the database calls
 *     delivered; a sync that fails is a write that failed;
 *   - a pipe, a socket or a terminal: the line is written whole; what the
 *     reader does with it (and whether it survives the reader) is the
 *     reader's (relay/README.md says so, with the numbers);
 *   - a line is never left glued to the next one: a write that fails
 *     after part of a line ends that line where it can, and a relay that
 *     starts on a regular file that does not end with a newline starts on
 *     a new line, so an event that commits is always on a line of its own
 *     (the fragment before it is the line of an event whose transaction
 *     rolled back, and which is written again);
 *   - two relays writing to one pipe write each line whole: a line longer
 *     than PIPE_BUF (4 KiB) is not written atomically by the kernel, so
 *     each line is written under a record lock on the pipe (fcntl, which,
 *     unlike flock, excludes processes that share the descriptor);
 *   - a file larger than RLIMIT_FSIZE allows is a write error (EFBIG:
 *     SIGXFSZ is ignored, signals.c), not a death;
 *   - a reader that stops reading blocks the writer, but never past a stop
 *     signal: a pipe is written in pieces of PIPE_BUF bytes, each after
 *     poll() said there is room (a piece that size never blocks), with the
 *     self-pipe watched meanwhile.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/output.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "relay.h"

/*
 * The last byte of a regular file opened for writing only (standard output
 * with >> or >): read through /proc/self/fd, which opens the file anew for
 * reading.  -1 when it cannot be read.
 */
static int
last_byte(off_t size)
{
	unsigned char c;
	int			fd;
	ssize_t		n;

	n = pread(STDOUT_FILENO, &c, 1, size - 1);
	if (n == 1)
		return c;
	fd = open("/proc/self/fd/1", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = pread(fd, &c, 1, size - 1);
	close(fd);
	return n == 1 ? c : -1;
}

/*
 * What standard output is, once, at start; on a regular file that does not
 * end with a newline (a line a failed write left short), start a new line.
 */
void
output_start(Relay *r)
{
	struct stat st;

	if (r->opts.exec_command != NULL)
		return;
	if (fstat(STDOUT_FILENO, &st) != 0)
		relay_fatal(EXIT_OUTPUT, "could not look at standard output: %s", strerror(errno));
	r->output.regular = S_ISREG(st.st_mode);
	r->output.lock = !r->output.regular;
	if (r->output.regular && st.st_size > 0)
	{
		int			c = last_byte(st.st_size);

		if (c >= 0 && c != '\n')
		{
			char		why[256];

			relay_log("standard output does not end with a newline (a line cut short by a failed write): starting a new line");
			if (output_line(r, "\n", 1, why, sizeof(why)) != DELIVERY_OK)
				relay_fatal(EXIT_OUTPUT, "%s", why);
		}
		else if (c < 0 && r->opts.verbose)
			relay_log("could not read the end of standard output: not checking for a line cut short");
	}
}

/*
 * Lock (F_WRLCK) or unlock (F_UNLCK) all of standard output, for one line.
 * False when a stop signal ended the wait for the lock; a descriptor that
 * takes no lock is written without one from then on.
 */
static bool
lock_output(Relay *r, short type)
{
	struct flock fl;

	if (!r->output.lock)
		return true;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = 0;
	fl.l_len = 0;
	while (fcntl(STDOUT_FILENO, F_SETLKW, &fl) != 0)
	{
		if (errno == EINTR)
		{
			if (stop_signal)
				return false;
			continue;
		}
		if (r->opts.verbose)
			relay_log("standard output takes no lock (%s): lines are written without one",
					  strerror(errno));
		r->output.lock = false;
		break;
	}
	return true;
}

/*
 * Wait until a pipe (or socket, terminal) has room for PIPE_BUF bytes or a
 * stop signal comes; false on the latter.
 */
static bool
wait_for_room(void)
{
	struct pollfd pfd[2];

	for (;;)
	{
		if (stop_signal)
			return false;
		pfd[0].fd = STDOUT_FILENO;
		pfd[0].events = POLLOUT;
		pfd[0].revents = 0;
		pfd[1].fd = wakeup_fd();
		pfd[1].events = POLLIN;
		pfd[1].revents = 0;
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			relay_fatal(EXIT_SERVER, "poll failed: %s", strerror(errno));
		drain_wakeups();
		if (pfd[0].revents != 0)
			return true;	/* room, or an error the write will report */
	}
}

/*
 * Write len bytes of a line to standard output, whole: DELIVERY_OK;
 * DELIVERY_OUTPUT_ERROR with the reason in why (a line written in part is
 * ended with a newline where that can still be written); DELIVERY_STOPPED
 * when a stop signal came while the reader did not read (the line may be
 * written in part).
 */
DeliveryOutcome
output_line(Relay *r, const char *data, size_t len, char *why, size_t whylen)
{
	size_t		done = 0;
	DeliveryOutcome outcome = DELIVERY_OK;

	if (!lock_output(r, F_WRLCK))
		return DELIVERY_STOPPED;
	while (done < len)
	{
		size_t		piece = len - done;
		ssize_t		n;

		if (!r->output.regular)
		{
			if (!wait_for_room())
			{
				outcome = DELIVERY_STOPPED;
				break;
			}
			if (piece > PIPE_BUF)
				piece = PIPE_BUF;
		}
		n = write(STDOUT_FILENO, data + done, piece);
		if (n > 0)
			done += (size_t) n;
		else if (n < 0 && errno == EINTR)
			continue;
		else
		{
			snprintf(why, whylen, "could not write to standard output: %s",
					 n < 0 ? strerror(errno) : "nothing written");
			outcome = DELIVERY_OUTPUT_ERROR;
			/* end the line cut short, if a newline still fits */
			if (done > 0 && data[done - 1] != '\n')
			{
				struct pollfd pfd = {STDOUT_FILENO, POLLOUT, 0};

				if (r->output.regular || poll(&pfd, 1, 0) == 1)
				{
					ssize_t		rc = write(STDOUT_FILENO, "\n", 1);

					(void) rc;
				}
			}
			break;
		}
	}
	if (done > 0 && r->output.regular)
		r->output.unsynced = true;
	(void) lock_output(r, F_UNLCK);
	return outcome;
}

/*
 * Make what this batch wrote to a regular file durable (before its
 * COMMIT); false, with the reason in why, when it could not be.
 */
bool
output_sync(Relay *r, char *why, size_t whylen)
{
	if (!r->output.regular || !r->output.unsynced)
		return true;
	while (fdatasync(STDOUT_FILENO) != 0)
	{
		if (errno == EINTR)
			continue;
		snprintf(why, whylen, "could not sync standard output to disk: %s", strerror(errno));
		return false;
	}
	r->output.unsynced = false;
	return true;
}
