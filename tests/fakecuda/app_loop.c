/* Test application for the live control tests (regress/hook_control.sh):
 * launches `fill` in a loop with a small sleep, its grid cycling through
 * 1..5 blocks so every launch changes the configuration and the hook emits a
 * `launch` line for each (the script sees every launch's seq and whether it
 * was probed); `scale` every 10th iteration (never selected). Forks once
 * after the first launches: parent and child both loop, so the script can
 * check that each process obeys the control file on its own. Stops when
 * STOPFILE exists (or after SECONDS, default 60). Prints one summary line
 * and exits 0 when every driver call succeeded in both processes.
 * The child ends with _exit (its hook's exit handler does not run).
 * APP_LOOP_SLEEP_MS: the sleep between iterations (default 2 ms).
 * APP_LOOP_THREADS: after each launch of fill, a line `threads pid=P i=I
 * before=B after=A`, the process's thread count right before and after the
 * launch (which launch started a thread; i=-1: the first, before the fork).
 * Usage: app_loop KERNELS.ptx STOPFILE [SECONDS] */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cuda.h>
#include "app_util.h"

#define LOOP_SLEEP_NS 2000000l /* 2 ms between iterations */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d)) != NULL;)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void loop(CUfunction fill, CUfunction scale, CUdeviceptr buf, const char *stop, double seconds)
{
	int say = getenv("APP_LOOP_THREADS") != NULL;
	const char *ms = getenv("APP_LOOP_SLEEP_MS");
	long sleep_ns = ms ? atol(ms) * 1000000l : LOOP_SLEEP_NS;
	unsigned n = 1024;
	float factor = 1.0f;
	void *fparams[] = { &buf, &n };
	void *sparams[] = { &buf, &factor };
	struct stat st;
	double end = now_s() + seconds;
	for (unsigned i = 0; stat(stop, &st) != 0 && now_s() < end; i++) {
		int before = say ? thread_count() : 0;
		CK(cuLaunchKernel(fill, 1 + i % 5, 1, 1, 64, 1, 1, 0, 0, fparams, NULL));
		if (say)
			printf("threads pid=%d i=%u before=%d after=%d\n", (int)getpid(), i, before, thread_count());
		if (i % 10 == 0)
			CK(cuLaunchKernel(scale, 2, 1, 1, 32, 1, 1, 0, 0, sparams, NULL));
		struct timespec ts = { sleep_ns / 1000000000l, sleep_ns % 1000000000l };
		nanosleep(&ts, NULL);
	}
	CK(cuCtxSynchronize());
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s KERNELS.ptx STOPFILE [SECONDS]\n", argv[0]);
		return 2;
	}
	char *ptx = slurp(argv[1]);
	if (!ptx)
		return 2;
	double seconds = argc > 3 ? atof(argv[3]) : 60;
	/* static: the fake driver never frees, and what it hands out must stay
	 * reachable for the leak checker after main returns. */
	static CUdevice dev;
	static CUcontext ctx;
	static CUmodule mod;
	static CUfunction fill, scale;
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
	CK(cuModuleGetFunction(&scale, mod, "scale"));
	CK(cuMemAlloc(&buf, 1024 * sizeof(float)));
	free(ptx);
	int say = getenv("APP_LOOP_THREADS") != NULL;
	if (say)
		setvbuf(stdout, NULL, _IOLBF, 0); /* parent's and child's lines whole, none twice */
	unsigned n = 1024;
	void *params[] = { &buf, &n };
	int before = say ? thread_count() : 0;
	CK(cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, 0, params, NULL));
	if (say)
		printf("threads pid=%d i=-1 before=%d after=%d\n", (int)getpid(), before, thread_count());

	/* Let the hook's threads go idle first: the sanitizer runtime's
	 * allocator locks are not fork-safe (GCC 12/13 libasan), so a fork while
	 * a hook thread allocates or frees leaves the child's allocator locked
	 * and the child hangs at its next allocation of that size (seen in CI:
	 * the child never applied a control generation). The hook's timing
	 * thread emits the first launch's stats within 200 ms and allocates
	 * nothing on idle ticks after that; 600 ms covers it and the event
	 * writer. (glibc's malloc handles fork; this is for the sanitizer
	 * build.) */
	struct timespec quiet = { 0, 600000000 };
	nanosleep(&quiet, NULL);
	fflush(stdout);
	pid_t child = fork();
	if (child < 0)
		printf("FAIL fork\n"), failures++;
	loop(fill, scale, buf, argv[2], seconds);
	if (child == 0) {
		/* _exit, as forked children usually do: what other threads of the
		 * parent held at fork time is unreachable here, and a leak check
		 * at exit would blame it on the child. */
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	int status = 0;
	if (child > 0 && (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0))
		printf("FAIL child status %d\n", status), failures++;
	printf("app_loop: done, %d failures\n", failures);
	return failures ? 1 : 0;
}
