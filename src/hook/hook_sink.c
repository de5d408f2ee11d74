/* The event channel of one process (hook_sink.h). State is this process's
 * alone: a fork child closes what it inherited and opens its own, so the
 * launcher can tell processes apart by connection and a connection ends
 * when its process does.
 *
 * Order of choice, made at the first line and again only when the sink is
 * lost: the socket; the NTOP_EVENT_FD descriptor (only without a socket);
 * events-<pid>.log. Once the socket could not be reached the process stays
 * on its file, so its lines keep their order for the launcher (which reads
 * the file after what the socket brought). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "common/fdio.h"
#include "common/safefs.h"
#include "common/timeutil.h"
#include "hook/hook_dir.h"
#include "hook/hook_log.h"
#include "hook/hook_sink.h"
#include "hook/hook_state.h"

#define SINK_CONNECT_WAIT_NS 2000000000ull /* a full accept backlog: the writer retries this long */
#define SINK_RETRY_NS 1000000000ull        /* nothing could be opened: try again after this */
#define SINK_FILE_TRIES 100                /* events-<pid>.log, events-<pid>.1.log, ... (pid reuse) */

enum sink_kind { SINK_NONE, SINK_SOCK, SINK_FD, SINK_FILE };

static struct {
	enum sink_kind kind;
	int fd;                    /* -1 while none is open */
	dev_t dev;                 /* identity of what fd was when opened */
	ino_t ino;
	int sock_failed;           /* the socket was unreachable: stay on the file */
	int file_k;                /* events-<pid>.log (0) or events-<pid>.<k>.log: the one made, -1 none */
	dev_t file_dev;            /* identity of the file this process made (reopened, never made twice) */
	ino_t file_ino;
	uint64_t retry_ns;         /* nothing open: no new attempt before this (monotonic) */
} sink = { SINK_NONE, -1, 0, 0, 0, -1, 0, 0, 0 };

void hook_sink_init(void)
{
	struct hook_config *c = &hook.cfg;
	c->events_on = c->event_sock != NULL || c->event_fd >= 0 || c->trace_dir != NULL;
}

static int sink_same(int fd, dev_t dev, ino_t ino)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

static void sink_set(enum sink_kind kind, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return;
	}
	sink.kind = kind;
	sink.fd = fd;
	sink.dev = st.st_dev;
	sink.ino = st.st_ino;
}

/* Forgets the sink; closes it only while it still is ours (the application
 * may have closed it and reused the number for a file of its own). */
static void sink_drop(void)
{
	if (sink.fd >= 0 && sink.kind != SINK_FD && sink_same(sink.fd, sink.dev, sink.ino))
		close(sink.fd);
	else if (sink.fd >= 0)
		hook_log("event sink fd %d is no longer ours (closed or reused by the application)", sink.fd);
	sink.kind = SINK_NONE;
	sink.fd = -1;
}

/* 0 connected, -1 unreachable, 1 the backlog is full (try again). */
static int sink_connect(void)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlen(hook.cfg.event_sock) >= sizeof sa.sun_path)
		return -1;
	strcpy(sa.sun_path, hook.cfg.event_sock);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	int rc;
	while ((rc = connect(fd, (struct sockaddr *)&sa, sizeof sa)) < 0 && errno == EINTR)
		;
	if (rc < 0) {
		int err = errno;
		close(fd);
		hook_log("event socket %s: %s", hook.cfg.event_sock, strerror(err));
		return err == EAGAIN ? 1 : -1;
	}
	/* Blocking from now on (the writer thread waits for a slow reader;
	 * an application thread passes MSG_DONTWAIT). */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	sink_set(SINK_SOCK, fd);
	return 0;
}

static int sink_file_name(char *name, size_t cap, int k)
{
	int n = k ? snprintf(name, cap, "events-%d.%d.log", hook.pid, k) : snprintf(name, cap, "events-%d.log", hook.pid);
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* A new events-<pid>[.<k>].log in dfd (O_EXCL, never through a link):
 * its descriptor, *k its number; -1 when none could be made. */
static int sink_create_file(int dfd, int *k)
{
	char name[64];
	for (*k = 0; *k < SINK_FILE_TRIES; (*k)++) {
		if (sink_file_name(name, sizeof name, *k) < 0)
			return -1;
		int fd = safefs_create(dfd, name, O_WRONLY | O_APPEND);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* events-<pid>.log, this process's own: made with O_EXCL (never another's,
 * never through a link) in the checked trace directory (hook_dir.c),
 * reopened (same file, checked) if the application closed it. */
static int sink_open_file(void)
{
	char name[64], *cause = NULL;
	int dfd = hook_dir_open(&cause);
	if (dfd < 0) {
		hook_log("events file: %s", cause ? cause : "no trace directory");
		free(cause);
		return -1;
	}
	if (sink.file_k >= 0 && sink_file_name(name, sizeof name, sink.file_k) == 0) {
		int fd = openat(dfd, name, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
		if (fd >= 0 && sink_same(fd, sink.file_dev, sink.file_ino)) {
			sink_set(SINK_FILE, fd);
			close(dfd);
			return 0;
		}
		if (fd >= 0)
			close(fd);
		/* removed or replaced: make a new one */
	}
	int k, fd = sink_create_file(dfd, &k);
	close(dfd);
	if (fd < 0)
		return -1;
	sink_set(SINK_FILE, fd);
	if (sink.fd < 0)
		return -1;
	sink.file_k = k;
	sink.file_dev = sink.dev;
	sink.file_ino = sink.ino;
	if (sink_file_name(name, sizeof name, k) == 0)
		hook_log("events go to %s/%s", hook.cfg.trace_dir, name);
	return 0;
}

int hook_sink_write_aside(const char *line, size_t len)
{
	int dfd = hook_dir_open(NULL), k;
	int fd = dfd >= 0 ? sink_create_file(dfd, &k) : -1;
	int rc = fd >= 0 && fdio_write_all(fd, line, len) == 0 ? 0 : -1;
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

/* The NTOP_EVENT_FD descriptor, while it is the file it was at load. */
static int sink_open_fd(void)
{
	struct hook_config *c = &hook.cfg;
	struct stat st;
	if (c->event_fd < 0 || fstat(c->event_fd, &st) < 0 || (unsigned long long)st.st_dev != c->event_dev ||
	    (unsigned long long)st.st_ino != c->event_ino)
		return -1;
	sink.kind = SINK_FD;
	sink.fd = c->event_fd;
	sink.dev = st.st_dev;
	sink.ino = st.st_ino;
	return 0;
}

/* 0 open, -1 nowhere to write (for now), 1 nowait and the socket's backlog
 * is full. */
static int sink_open(int nowait)
{
	uint64_t now = time_mono_ns();
	if (sink.retry_ns && now < sink.retry_ns)
		return -1;
	if (hook.cfg.event_sock && !sink.sock_failed) {
		int rc = sink_connect();
		for (uint64_t wait = 1000000; rc == 1 && !nowait && time_mono_ns() - now < SINK_CONNECT_WAIT_NS;
		     wait = wait < 64000000 ? wait * 2 : wait) {
			struct timespec ts = { 0, (long)wait };
			nanosleep(&ts, NULL);
			rc = sink_connect();
		}
		if (rc == 0)
			return 0;
		if (rc == 1 && nowait)
			return 1;
		sink.sock_failed = 1;
	}
	if (!hook.cfg.event_sock && sink_open_fd() == 0)
		return 0;
	if (hook.cfg.trace_dir && sink_open_file() == 0)
		return 0;
	sink.retry_ns = now + SINK_RETRY_NS;
	return -1;
}

/* One send or write of the whole line: 0 done, -1 the sink is gone (reopen
 * and try again), 1 would block (nowait), 2 failed for good (drop). */
static int sink_put(const char *line, size_t len, int nowait)
{
	if (!sink_same(sink.fd, sink.dev, sink.ino))
		return -1; /* closed by the application, maybe reused: not ours */
	if (sink.kind == SINK_SOCK) {
		ssize_t w;
		/* send(): a descriptor that is no socket (the number reused by
		 * the app between the check and here) fails with ENOTSOCK */
		while ((w = send(sink.fd, line, len, MSG_NOSIGNAL | (nowait ? MSG_DONTWAIT : 0))) < 0 && errno == EINTR)
			;
		if (w >= 0)
			return 0;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return nowait ? 1 : 2;
		if (errno == ENOTSOCK || errno == EBADF)
			return -1; /* not ours any more: connect again */
		if (errno != EPIPE && errno != ECONNRESET && errno != ENOTCONN)
			return 2;
		/* the launcher closed it (ntop quit): the file from now on */
		hook_log("event socket: %s", strerror(errno));
		sink.sock_failed = 1;
		return -1;
	}
	while (len > 0) {
		ssize_t w = write(sink.fd, line, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return 2; /* reader gone, disk full, past ulimit -f: the application goes on, the line is counted */
		line += w;
		len -= (size_t)w;
	}
	return 0;
}

enum hook_sink_rc hook_sink_write(const char *line, size_t len, int nowait)
{
	for (int attempt = 0; attempt < 3; attempt++) {
		if (sink.fd < 0) {
			int rc = sink_open(nowait);
			if (rc != 0)
				return rc == 1 ? HOOK_SINK_LATER : HOOK_SINK_DROPPED;
		}
		int rc = sink_put(line, len, nowait);
		if (rc == 0)
			return HOOK_SINK_DONE;
		if (rc == 2)
			return HOOK_SINK_DROPPED;
		if (rc == 1)
			return HOOK_SINK_LATER;
		sink_drop();
	}
	return HOOK_SINK_DROPPED;
}

void hook_sink_fork_child(void)
{
	sink_drop();
	sink.sock_failed = 0;
	sink.file_k = -1;
	sink.retry_ns = 0;
}
