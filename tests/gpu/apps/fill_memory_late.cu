// An app that takes the GPU's memory late: 200 launches of a one-element
// copy over 16M threads, back to back after a 300 ms pause behind the first
// (under `ntop record -p dmat` with no
// limit, the hook's map pool grows to gigabytes while its collector lags),
// then, a second later (with the argument `now`: at once, while the hook
// still copies results back), cudaMalloc of 256 MiB chunks until one fails. It
// must get as much as it would without ntop: all but under 1 GiB of what
// was free before the launches (the hook gives its idle map memory back
// when an allocation fails, after waiting for results in flight). Then it
// frees them and checks one more copy.
// With `vmm` the chunks come from cuMemCreate (the virtual memory API, as
// PyTorch's expandable segments allocate; reached as PyTorch does, through
// cudaGetDriverEntryPointByVersion). Prints the same lines plain and under
// ntop; the bytes short go to stderr.
#include <cuda.h>
#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("FAIL %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void copy(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i];
}

int main(int argc, char **argv)
{
	const bool now = argc > 1 && std::string(argv[1]) == "now";
	const bool vmm = argc > 1 && std::string(argv[1]) == "vmm";
	CUresult (*mem_create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long) =
		nullptr;
	CUresult (*mem_release)(CUmemGenericAllocationHandle) = nullptr;
	cudaDriverEntryPointQueryResult q;
	if (vmm && (cudaGetDriverEntryPointByVersion("cuMemCreate", (void **)&mem_create, 12000, cudaEnableDefault, &q) !=
			    cudaSuccess ||
		    cudaGetDriverEntryPointByVersion("cuMemRelease", (void **)&mem_release, 12000, cudaEnableDefault,
						     &q) != cudaSuccess)) {
		printf("FAIL no cuMemCreate\n");
		return 1;
	}
	CUmemAllocationProp prop = {};
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	const int n = 16 << 20, launches = 200;
	const size_t chunk = (size_t)256 << 20;
	std::vector<float> h(n);
	for (int i = 0; i < n; i++)
		h[i] = (float)(i % 9973);
	float *in, *out;
	CK(cudaMalloc(&in, n * sizeof(float)));
	CK(cudaMalloc(&out, n * sizeof(float)));
	CK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	size_t free0 = 0, total = 0;
	CK(cudaMemGetInfo(&free0, &total));
	for (int l = 0; l < launches; l++) {
		copy<<<n / 256, 256>>>(in, out, n);
		if (l == 0) // ntop builds a probed copy off the app's threads: ready for the other 199
			usleep(300 * 1000);
	}
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	if (!now)
		sleep(1); // results copied back: the hook's buffers are idle
	std::vector<void *> got;
	std::vector<CUmemGenericAllocationHandle> handles;
	for (;;) {
		void *p = nullptr;
		CUmemGenericAllocationHandle h = 0;
		if (vmm ? mem_create(&h, chunk, &prop, 0) != CUDA_SUCCESS : cudaMalloc(&p, chunk) != cudaSuccess)
			break;
		if (vmm)
			handles.push_back(h);
		else
			got.push_back(p);
	}
	(void)cudaGetLastError(); // the failed cudaMalloc's error
	size_t taken = (got.size() + handles.size()) * chunk, short_by = free0 > taken ? free0 - taken : 0;
	fprintf(stderr, "fill_memory_late: %zu MiB free before, %zu MiB taken, %zu MiB short\n", free0 >> 20,
		taken >> 20, short_by >> 20);
	printf("fill_memory_late filled the GPU to within 1 GiB of what was free: %s\n",
	       short_by < ((size_t)1 << 30) ? "yes" : "no");
	for (void *p : got)
		CK(cudaFree(p));
	for (CUmemGenericAllocationHandle h : handles)
		if (mem_release(h) != CUDA_SUCCESS) {
			printf("FAIL cuMemRelease\n");
			return 1;
		}
	copy<<<n / 256, 256>>>(in, out, n);
	CK(cudaGetLastError());
	std::vector<float> back(n);
	CK(cudaMemcpy(back.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		if (back[i] != h[i]) {
			printf("FAIL copy at %d\n", i);
			return 1;
		}
	printf("fill_memory_late copy ok\n");
	return 0;
}
