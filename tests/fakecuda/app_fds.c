/* Test application for the event channel (regress/hook_fds.sh): launches
 * `fill` N times, each with another grid than the one before, so the hook
 * emits a `launch` line with its seq for every one. With DATAFILE, after
 * the first launch it does what daemons do: closes descriptors 3..1023
 * (the hook's connection among them), opens DATAFILE and duplicates it
 * onto 4..63 as well (so whatever number the hook had now names the
 * app's file), then writes its own lines into it between the remaining
 * launches. Exits normally (the hook's exit line). Prints one summary line
 * and exits 0 when every driver call and write succeeded.
 * Usage: app_fds KERNELS.ptx [DATAFILE|-] [N] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cuda.h>
#include "app_util.h"

/* Under `ntop record` (NTOP_TRACE_DIR set): waits, for at most 10 s, until
 * the session's events.log holds this process's hello, so the hook's
 * connection exists before the descriptors are taken (a fixed 200 ms was
 * too short on a loaded 2-core machine). Else 200 ms. */
static void wait_hook_connected(void)
{
	const char *dir = getenv("NTOP_TRACE_DIR");
	char path[4096], want[64], line[1024];
	snprintf(want, sizeof want, " pid=%d ", (int)getpid());
	int n = dir && snprintf(path, sizeof path, "%s/events.log", dir) < (int)sizeof path ? 1000 : 20;
	for (int i = 0; i < n; i++) {
		FILE *f = dir ? fopen(path, "r") : NULL;
		int seen = 0;
		while (f && !seen && fgets(line, sizeof line, f))
			seen = !strncmp(line, "hello ", 6) && strstr(line, want);
		if (f)
			fclose(f);
		if (seen)
			return;
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
}

/* Closes 3..1023, opens path and puts it on 4..63 too: returns its fd. */
static int take_fds(const char *path)
{
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	int d = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (d < 0)
		return -1;
	for (int fd = 4; fd < 64; fd++)
		if (fd != d && dup2(d, fd) < 0)
			return -1;
	return d;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s KERNELS.ptx [DATAFILE|-] [N]\n", argv[0]);
		return 2;
	}
	const char *data = argc > 2 && strcmp(argv[2], "-") != 0 ? argv[2] : NULL;
	int n = argc > 3 ? atoi(argv[3]) : 20;
	char *ptx = slurp(argv[1]);
	if (!ptx)
		return 2;
	/* static: the fake driver never frees, and what it hands out must stay
	 * reachable for the leak checker after main returns. */
	static CUdevice dev;
	static CUcontext ctx;
	static CUmodule mod;
	static CUfunction fill;
	static CUdeviceptr buf;
	if (cuInit(0) != CUDA_SUCCESS) {
		printf("cuInit failed\n");
		free(ptx);
		return 4;
	}
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, ptx));
	CK(cuModuleGetFunction(&fill, mod, "fill"));
	CK(cuMemAlloc(&buf, 1024 * sizeof(float)));
	free(ptx);
	unsigned count = 1024;
	void *params[] = { &buf, &count };
	CK(cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, 0, params, NULL));
	int d = -1;
	if (data) {
		wait_hook_connected();
		fflush(stdout);
		d = take_fds(data);
		if (d < 0)
			printf("FAIL cannot take the descriptors for %s\n", data), failures++;
	}
	for (int i = 0; i < n; i++) {
		if (d >= 0) {
			char line[64];
			int len = snprintf(line, sizeof line, "app data line %d\n", i);
			if (write(d, line, (size_t)len) != len)
				printf("FAIL write %d\n", i), failures++;
		}
		CK(cuLaunchKernel(fill, 2 + (unsigned)i % 4, 1, 1, 64, 1, 1, 0, 0, params, NULL));
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	CK(cuCtxSynchronize());
	printf("app_fds: pid %d, %d launches, %d failures\n", (int)getpid(), n + 1, failures);
	return failures ? 1 : 0;
}
