/*-------------------------------------------------------------------------
 *
 * signals.c
 *	  Signal handlers, the self-pipe, and sleeping until a stop signal.
 *
 * Copyright (c) 2026, the okno authors
 *
 * IDENTIFICATION
 *	  relay/signals.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "relay.h"

/*
 * What the signal handler touches, and so the only state outside the
 * Relay: a handler gets no argument, and may only set a volatile
 * sig_atomic_t and write(2).
 *
 * stop_signal: SIGINT or SIGTERM came (its number): stop after the event
 * in hand.  Every loop and wait looks at it.
 *
 * The self-pipe: signal handlers write a byte, every poll() watches it.
 * Made by setup_signals before the handlers are installed, never changed
 * after.
 */
volatile sig_atomic_t stop_signal = 0;
static int	wakeup_fds[2] = {-1, -1};

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

void
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
void
check_std_fds(Relay *r)
{
	int			fd;

	for (fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
	{
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		if (open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY) != fd)
			exit(EXIT_SERVER);
		if (fd == STDOUT_FILENO && r->opts.exec_command == NULL)
			relay_fatal(EXIT_OUTPUT, "standard output is closed");
	}
}

void
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

	/*
	 * A reader that went away is a write error (EPIPE), not a death; so is
	 * a file that RLIMIT_FSIZE lets grow no more (EFBIG)
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPIPE, &sa, NULL) != 0 || sigaction(SIGXFSZ, &sa, NULL) != 0)
		relay_fatal(EXIT_SERVER, "sigaction failed: %s", strerror(errno));
}

/* the self-pipe's end that every poll() watches */
int
wakeup_fd(void)
{
	return wakeup_fds[0];
}

void
drain_wakeups(void)
{
	char		buf[64];

	while (read(wakeup_fds[0], buf, sizeof(buf)) > 0)
		;
}

/*
 * Reap the processes that ended and that nobody waits for: orphans of the
 * commands' (a command's background children), which are the relay's
 * when it runs as PID 1 (a container without an init) or is a subreaper.
 * Never while a command runs: deliver_exec reaps then (waitpid(-1)).
 */
void
reap_orphans(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* sleep, but not past a SIGINT or SIGTERM */
void
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
		reap_orphans();
	}
}
