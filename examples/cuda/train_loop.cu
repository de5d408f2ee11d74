/* A long-running "training loop" to attach to: STEPS steps (default 3000),
 * each a forward kernel (y = W x, 256 x 256), an update kernel (W -= lr *
 * y x^T) and a 10 ms pause, so 3000 steps take about 40 s. Prints the
 * weights' checksum at the end (the same under ntop as without) and its
 * progress every 500 steps. Usage: train_loop [steps]. */
#include <unistd.h>
#include <vector>
#include "common.h"

static const int N = 256;

__global__ void train_forward(const float *w, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= N)
		return;
	float s = 0;
	for (int j = 0; j < N; j++)
		s += w[i * N + j] * x[j];
	y[i] = s;
}

__global__ void train_update(float *w, const float *x, const float *y, float lr)
{
	int i = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j < N)
		w[i * N + j] -= lr * y[i] * x[j] * 1e-3f;
}

int main(int argc, char **argv)
{
	long steps = arg_long(argc, argv, 1, 3000);
	std::vector<float> hw(N * N), hx(N);
	for (int i = 0; i < N * N; i++)
		hw[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
	for (int j = 0; j < N; j++)
		hx[j] = (float)(j % 13) / 13.0f;
	float *w, *x, *y;
	CK(cudaMalloc(&w, N * N * sizeof(float)));
	CK(cudaMalloc(&x, N * sizeof(float)));
	CK(cudaMalloc(&y, N * sizeof(float)));
	CK(cudaMemcpy(w, hw.data(), N * N * sizeof(float), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(x, hx.data(), N * sizeof(float), cudaMemcpyHostToDevice));
	for (long s = 0; s < steps; s++) {
		train_forward<<<N / 128, 128>>>(w, x, y);
		train_update<<<dim3(N / 128, N), 128>>>(w, x, y, 0.01f);
		CK_LAUNCH();
		usleep(10000);
		if ((s + 1) % 500 == 0) {
			printf("info: step %ld\n", s + 1);
			fflush(stdout);
		}
	}
	CK(cudaMemcpy(hw.data(), w, N * N * sizeof(float), cudaMemcpyDeviceToHost));
	print_checksum("weights", hw.data(), hw.size() * sizeof(float));
	return 0;
}
