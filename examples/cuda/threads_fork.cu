/* Many host threads launching at once, in two processes: the app forks before
 * touching CUDA, then parent and child each run 4 threads that launch a kernel
 * 200 times on their own streams. ntop must list both processes' kernels and
 * probe from all threads without races. The parent prints after the child has
 * finished, so the output order is fixed. Usage: threads_fork. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

static const int THREADS = 4, LAUNCHES = 200, N = 1 << 16, TPB = 128;

__global__ void tf_bump(int *data, int n, int tag)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		data[i] += tag + (i & 7);
}

struct worker {
	int tag;
	int *dev;
	int fails;
};

static void *work(void *arg)
{
	struct worker *w = (struct worker *)arg;
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&w->dev, N * sizeof(int)));
	CK(cudaMemsetAsync(w->dev, 0, N * sizeof(int), s));
	for (int l = 0; l < LAUNCHES; l++)
		tf_bump<<<(N + TPB - 1) / TPB, TPB, 0, s>>>(w->dev, N, w->tag);
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(s));
	int *h = (int *)malloc(N * sizeof(int));
	CK(cudaMemcpy(h, w->dev, N * sizeof(int), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		if (h[i] != LAUNCHES * (w->tag + (i & 7))) {
			w->fails = report_mismatch("tf_bump", i, h[i], LAUNCHES * (w->tag + (i & 7)));
			break;
		}
	free(h);
	CK(cudaFree(w->dev));
	CK(cudaStreamDestroy(s));
	return NULL;
}

static int run(const char *who, int base_tag)
{
	pthread_t t[THREADS];
	struct worker w[THREADS];
	for (int i = 0; i < THREADS; i++) {
		w[i].tag = base_tag + i;
		w[i].fails = 0;
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	int fails = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		fails += w[i].fails;
	}
	printf("%s threads %d launches %d %s\n", who, THREADS, THREADS * LAUNCHES, fails ? "FAILED" : "ok");
	fflush(stdout);
	return fails;
}

int main(void)
{
	fflush(stdout);
	pid_t child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0)
		_exit(run("child", 100) ? 1 : 0);
	int status = 0;
	waitpid(child, &status, 0);
	int fails = run("parent", 1);
	int child_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	printf("threads_fork %s\n", !fails && child_ok ? "ok" : "FAILED");
	return !fails && child_ok ? 0 : 1;
}
