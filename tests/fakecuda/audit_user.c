/* A user's own loader audit module (regress/hook_audit.sh): appends every
 * name the loader is asked for ("ORIG NAME" lines) to $AUDIT_USER_LOG, so
 * the test sees it still runs, and before ntop's, with ntop's appended to
 * LD_AUDIT. Built without sanitizers, like ntop's (src/hook/audit/rtld_audit.c). */
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((visibility("default"))) unsigned int la_version(unsigned int version)
{
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

__attribute__((visibility("default"))) char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
	(void)cookie;
	const char *log = getenv("AUDIT_USER_LOG");
	int fd = flag == LA_SER_ORIG && log ? open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;
	if (fd >= 0) {
		if (write(fd, "ORIG ", 5) < 0 || write(fd, name, strlen(name)) < 0 || write(fd, "\n", 1) < 0)
			(void)0; /* a test log: nothing to do about it */
		close(fd);
	}
	return (char *)name;
}
