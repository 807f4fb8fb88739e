/*-------------------------------------------------------------------------
 *
 * deliver.c
 *	  The --exec recipient: the command with its process group, its
 *	  environment and its timeout.
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
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "relay.h"

extern char **environ;

static void start_command(Relay *r, const RelayEvent *ev, const int in[2],
						  pid_t parent) RELAY_NORETURN;

/*
 * Whether a kind follows okno_emit's rule (1 to 40 of a-z 0-9 _ - .,
 * starting with a letter): only such a kind reaches the command's
 * environment.  A kind written by a plain INSERT may hold anything (a
 * newline, "$(...)"), and reaches the command only in the JSON line.
 */
static bool
kind_follows_rule(const char *kind)
{
	size_t		n;

	if (kind == NULL || !(kind[0] >= 'a' && kind[0] <= 'z'))
		return false;
	for (n = 0; kind[n] != '\0'; n++)
	{
		char		c = kind[n];

		if (n >= 40 ||
			!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			  c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

/*
 * The command's environment: the relay's, without libpq's variables (PG*:
 * PGPASSWORD, PGHOST ... are the relay's connection, not the command's),
 * with the event's id and, when it follows okno's rule, its kind.  In the
 * child, after fork (the parent has one thread).
 */
static void
command_environment(const RelayEvent *ev)
{
	char	  **e;
	char		name[256];

	for (e = environ; *e != NULL;)
	{
		const char *eq = strchr(*e, '=');
		size_t		len = eq != NULL ? (size_t) (eq - *e) : strlen(*e);

		if (strncmp(*e, "PG", 2) == 0 && len < sizeof(name))
		{
			memcpy(name, *e, len);
			name[len] = '\0';
			if (unsetenv(name) != 0)
				_exit(127);
			e = environ;		/* the array changed: look again */
			continue;
		}
		e++;
	}
	if (setenv("OKNO_EVENT_ID", ev->id, 1) != 0)
		_exit(127);
	if (kind_follows_rule(ev->kind) ? setenv("OKNO_EVENT_KIND", ev->kind, 1) != 0
		: unsetenv("OKNO_EVENT_KIND") != 0)
		_exit(127);
}

#ifdef __linux__
/* the supervisor's SIGHUP: the relay died, and the command's group dies too */
static void
relay_died(int signo)
{
	(void) signo;
	kill(0, SIGKILL);
}

/*
 * Linux: a command must die with the relay, so that one orphaned by a
 * kill -9 of the relay does not run on, past its timeout, beside the next
 * relay's run of the same event.  PR_SET_PDEATHSIG would kill only the
 * process the relay forked, /bin/sh, and not the command sh starts (dash
 * does not exec the last command), so the process the relay forked stays
 * as the command's supervisor: on the relay's death (SIGHUP, by
 * PR_SET_PDEATHSIG) it kills the whole process group, the command's
 * children included, and otherwise it waits for the command and ends as it
 * ended, so the relay sees the command's exit status or signal.  Returns
 * only in the command's process (fork's child), which does not inherit the
 * death signal.  relay: the relay's pid; in: the line's pipe, whose ends
 * the supervisor closes, so that the command sees the end of its input.
 */
static void
supervise(pid_t relay, const int in[2])
{
	struct sigaction sa;
	struct rlimit no_core = {0, 0};
	pid_t		command;
	int			status;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = relay_died;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGHUP, &sa, NULL) != 0 ||
		prctl(PR_SET_PDEATHSIG, SIGHUP) != 0 || getppid() != relay)
		_exit(127);
	command = fork();
	if (command < 0)
		_exit(127);
	if (command == 0)
		return;					/* (exec resets SIGHUP's handler) */

	close(STDIN_FILENO);
	close(in[0]);
	close(in[1]);
	while (waitpid(command, &status, 0) < 0)
		if (errno != EINTR)
			_exit(127);
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	if (WIFSIGNALED(status))
	{
		/* the same signal, without a second core dump */
		(void) setrlimit(RLIMIT_CORE, &no_core);
		sa.sa_handler = SIG_DFL;
		sigaction(WTERMSIG(status), &sa, NULL);
		raise(WTERMSIG(status));
	}
	_exit(127);
}
#endif

/*
 * The child deliver_exec forked: a process group of its own, the default
 * handling of the signals the relay handles or ignores, none blocked, the
 * line's pipe as stdin and the command's environment; on Linux the
 * supervisor (supervise) stays between the relay and the command.  Then
 * /bin/sh -c COMMAND; never returns.  The parent has one thread, so
 * setenv is fine here.  parent: the relay's pid.
 */
static void
start_command(Relay *r, const RelayEvent *ev, const int in[2], pid_t parent)
{
	struct sigaction sa;
	sigset_t	none;

	setpgid(0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGXFSZ, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(in[0], STDIN_FILENO) < 0)
		_exit(127);
	command_environment(ev);
#ifdef __linux__
	supervise(parent, in);
#else
	(void) parent;
#endif
	execl("/bin/sh", "sh", "-c", r->opts.exec_command, (char *) NULL);
	_exit(127);
}

/*
 * Write what the pipe takes of the line at once (*written bytes of it went
 * before); a command that does not read it may exit anyway.  The pipe's
 * write end *fd is closed, and -1, once the whole line is in, or when the
 * command closed its stdin (EPIPE).
 */
static void
feed_line(int *fd, const LineBuffer *line, size_t *written)
{
	while (*fd >= 0 && *written < line->len)
	{
		ssize_t		n = write(*fd, line->data + *written, line->len - *written);

		if (n > 0)
			*written += (size_t) n;
		else if (n < 0 && errno == EINTR)
			continue;
		else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		else
		{
			close(*fd);			/* EPIPE: the command closed its stdin */
			*fd = -1;
		}
	}
	if (*fd >= 0 && *written == line->len)
	{
		close(*fd);
		*fd = -1;
	}
}

/*
 * Sleep until a wake-up (a signal, a child's end) or until the pipe's write
 * end fd (when not -1) takes more of the line, for no longer than seconds.
 */
static void
await_progress(int fd, double seconds)
{
	struct pollfd pfd[2];
	int			npfd = 1;

	pfd[0].fd = wakeup_fd();
	pfd[0].events = POLLIN;
	pfd[0].revents = 0;
	if (fd >= 0)
	{
		pfd[1].fd = fd;
		pfd[1].events = POLLOUT;
		pfd[1].revents = 0;
		npfd = 2;
	}
	if (poll(pfd, npfd, poll_timeout_ms(seconds)) < 0 && errno != EINTR)
		relay_fatal(EXIT_SERVER, "poll failed: %s", strerror(errno));
	drain_wakeups();
}

/*
 * Feed the line to the command pid through the pipe's write end fd and
 * wait for the command to end, both by deadline; past it the command's
 * group gets SIGKILL.  Reaps every other child that ended meanwhile (an
 * orphan of a command's: as PID 1, a container, every orphan is the
 * relay's to reap).  Closes fd; *status is the command's wait status.
 * Returns whether the command timed out.
 */
static bool
wait_for_command(pid_t pid, int fd, const LineBuffer *line, double deadline, int *status)
{
	size_t		written = 0;
	bool		timed_out = false;

	for (;;)
	{
		pid_t		ended;
		double		now;

		/* the command, or an orphan of a command's */
		ended = waitpid(-1, status, WNOHANG);
		if (ended == pid)
			break;
		if (ended > 0)
			continue;
		if (ended < 0 && errno != EINTR)
			relay_fatal(EXIT_SERVER, "waitpid failed: %s", strerror(errno));

		now = now_seconds();
		if (now >= deadline)
		{
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, status, 0) < 0)
			{
				if (errno != EINTR)
					relay_fatal(EXIT_SERVER, "waitpid failed: %s", strerror(errno));
			}
			timed_out = true;
			break;
		}

		feed_line(&fd, line, &written);
		await_progress(fd, deadline - now);
	}
	if (fd >= 0)
		close(fd);
	return timed_out;
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
	pid_t		parent;
	int			status = 0;
	double		deadline;

	if (pipe(in) != 0)
	{
		snprintf(why, whylen, "could not create a pipe: %s", strerror(errno));
		return DELIVERY_NOT_TRIED;
	}
	set_fd_flags(in[0], true, false);
	set_fd_flags(in[1], true, true);

	parent = getpid();
	pid = fork();
	if (pid < 0)
	{
		snprintf(why, whylen, "could not start the command: fork failed: %s%s", strerror(errno),
				 errno == EAGAIN ? " (too many processes: see relay/README.md on PID 1)" : "");
		close(in[0]);
		close(in[1]);
		return DELIVERY_NOT_TRIED;
	}
	if (pid == 0)
		start_command(r, ev, in, parent);	/* the child: never returns */

	/* also here, so that killing the group cannot race the child's setpgid */
	(void) setpgid(pid, pid);
	close(in[0]);

	deadline = now_seconds() + r->opts.exec_timeout;
	if (wait_for_command(pid, in[1], line, deadline, &status))
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
