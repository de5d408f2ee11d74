// 3-D blocks and grids: a 7-point stencil over a volume.
__global__ void __launch_bounds__(512) stencil3d(const float *in, float *out, int nx, int ny, int nz)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	int z = blockIdx.z * blockDim.z + threadIdx.z;
	if (x < 1 || y < 1 || z < 1 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1)
		return;
	long sy = nx, sz = (long)nx * ny, c = z * sz + y * sy + x;
	out[c] = 0.4f * in[c] + 0.1f * (in[c - 1] + in[c + 1] + in[c - sy] + in[c + sy] + in[c - sz] + in[c + sz]);
}
