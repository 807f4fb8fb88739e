/*-------------------------------------------------------------------------
 *
 * deliver.c
 *	  The recipients: standard output, and the --exec command with its
 *	  process group and timeout.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/deliver.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "relay.h"

/*
 * The line on stdout with write(2) (no stdio buffer to lose), complete
 * before we return, i.e. before the commit.
 */
DeliveryOutcome
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
DeliveryOutcome
deliver_exec(Relay *r, const RelayEvent *ev, const LineBuffer *line, char *why, size_t whylen)
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
		execl("/bin/sh", "sh", "-c", r->opts.exec_command, (char *) NULL);
		_exit(127);
	}

	/* also here, so that killing the group cannot race the child's setpgid */
	(void) setpgid(pid, pid);
	close(in[0]);

	deadline = now_seconds() + r->opts.exec_timeout;
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

		pfd[0].fd = wakeup_fd();
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
		snprintf(why, whylen, "timed out after %g s", r->opts.exec_timeout);
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
