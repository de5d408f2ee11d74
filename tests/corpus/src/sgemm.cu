// Tiled SGEMM: C = A * B, 32x32 shared-memory tiles, row-major.
#define TILE 32
__global__ void sgemm_tiled(const float *A, const float *B, float *C, int M, int N, int K)
{
	__shared__ float As[TILE][TILE];
	__shared__ float Bs[TILE][TILE + 1];
	int row = blockIdx.y * TILE + threadIdx.y;
	int col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0.f;
	for (int t = 0; t < K; t += TILE) {
		As[threadIdx.y][threadIdx.x] = (row < M && t + threadIdx.x < K) ? A[row * K + t + threadIdx.x] : 0.f;
		Bs[threadIdx.y][threadIdx.x] = (col < N && t + threadIdx.y < K) ? B[(t + threadIdx.y) * N + col] : 0.f;
		__syncthreads();
#pragma unroll
		for (int k = 0; k < TILE; ++k)
			acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
		__syncthreads();
	}
	if (row < M && col < N)
		C[row * N + col] = acc;
}
