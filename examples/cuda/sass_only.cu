/* Built with SASS only (-gencode arch=compute_90,code=sm_90, no PTX): ntop
 * must still list and time this kernel, and say why it cannot be probed. */
#include <vector>
#include "common.h"

__global__ void sass_only_kernel(const int *in, int *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i] * 7 - 3;
}

int main(void)
{
	const int n = 1 << 16;
	std::vector<int> hin(n), hout(n);
	for (int i = 0; i < n; i++)
		hin[i] = i % 1000;
	int *in, *out;
	CK(cudaMalloc(&in, n * sizeof(int)));
	CK(cudaMalloc(&out, n * sizeof(int)));
	CK(cudaMemcpy(in, hin.data(), n * sizeof(int), cudaMemcpyHostToDevice));
	for (int l = 0; l < 3; l++) {
		poison_device(out, n * sizeof(int));
		sass_only_kernel<<<n / 256, 256>>>(in, out, n);
		CK_LAUNCH();
	}
	CK(cudaMemcpy(hout.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		if (hout[i] != hin[i] * 7 - 3)
			return report_mismatch("sass_only", i, hout[i], hin[i] * 7 - 3);
	print_checksum("sass_only", hout.data(), n * sizeof(int));
	printf("sass_only ok\n");
	CK(cudaFree(in));
	CK(cudaFree(out));
	return 0;
}
