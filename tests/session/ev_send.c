/* A stand-in for the hook's event channel in tests that run without the
 * hook (test_session, regress/cli_record.sh, cli_export_records.sh):
 * connects to $NTOP_EVENT_SOCK as each hook process does (one connection,
 * made before anything is read), then sends each argument, or without
 * arguments each line of stdin as it arrives, as one message. Exit status
 * 0 when every line was sent.
 * Usage: ev_send [LINE...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int send_line(int fd, const char *line, size_t len)
{
	return send(fd, line, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *path = getenv("NTOP_EVENT_SOCK");
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (!path || strlen(path) >= sizeof sa.sun_path) {
		fprintf(stderr, "ev_send: NTOP_EVENT_SOCK unset or too long\n");
		return 2;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		perror("ev_send: connect");
		return 1;
	}
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		char *l = NULL;
		int n = asprintf(&l, "%s\n", argv[i]);
		if (n < 0 || send_line(fd, l, (size_t)n) < 0)
			rc = 1;
		free(l);
	}
	if (argc == 1) {
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;
		while ((n = getline(&line, &cap, stdin)) > 0)
			if (send_line(fd, line, (size_t)n) < 0)
				rc = 1;
		free(line);
	}
	close(fd);
	return rc;
}
