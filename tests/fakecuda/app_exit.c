/* Processes that end without the hook's exit line, as Python's os._exit,
 * a killed idle worker or a crash do:
 *
 *   app_exit KERNELS.ptx idle   launches fill 3 times, waits for them,
 *                               sleeps 0.6 s, _exit(0)
 *   app_exit KERNELS.ptx child  a forked child does that and then sleeps
 *                               until the parent, 0.6 s after the child's
 *                               last launch, kills it; the parent exits 0
 *   app_exit KERNELS.ptx busy   launches fill 3 times and _exit(0) at once
 *   app_exit KERNELS.ptx quiet  a forked child that never touches the GPU
 *                               is killed after 0.6 s, as a compile worker
 *                               that exec'd another program is */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include "app_util.h"

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000l };
	nanosleep(&ts, NULL);
}

static void launch3(const char *ptx)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule m;
	CUfunction fill;
	CUdeviceptr buf;
	unsigned n = 1024;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&m, ptx));
	CK(cuModuleGetFunction(&fill, m, "fill"));
	CK(cuMemAlloc(&buf, n * sizeof(float)));
	void *params[] = { &buf, &n };
	for (int i = 0; i < 3; i++)
		CK(cuLaunchKernel(fill, 4, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s KERNELS.ptx idle|child|busy|quiet\n", argv[0]);
		return 2;
	}
	char *ptx = slurp(argv[1]);
	if (!ptx)
		return 2;
	const char *mode = argv[2];
	/* the hook's event writer, busy with its hello and idle lines, must be
	 * asleep at the fork: a child forked while a thread holds ASan's
	 * allocator lock hangs (a sanitizer limitation) */
	if (!strcmp(mode, "quiet") || !strcmp(mode, "child"))
		nap_ms(1000);
	if (!strcmp(mode, "quiet")) {
		pid_t c = fork();
		if (c == 0)
			for (;;)
				nap_ms(100);
		nap_ms(600);
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
		free(ptx);
		printf("app_exit quiet: killed the idle child\n");
		return 0;
	}
	if (!strcmp(mode, "child")) {
		int fds[2];
		if (pipe(fds) < 0)
			return 1;
		pid_t c = fork();
		if (c == 0) {
			launch3(ptx);
			CK(cuCtxSynchronize());
			if (write(fds[1], "x", 1) != 1)
				_exit(1);
			for (;;)
				nap_ms(100);
		}
		char x;
		if (read(fds[0], &x, 1) != 1)
			return 1;
		nap_ms(600);
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
		free(ptx);
		printf("app_exit child: killed the idle child\n");
		return 0;
	}
	launch3(ptx);
	free(ptx);
	if (!strcmp(mode, "idle")) {
		CK(cuCtxSynchronize());
		nap_ms(600);
	}
	printf("app_exit %s: %d failures\n", mode, failures);
	fflush(stdout);
	_exit(failures ? 1 : 0);
}
