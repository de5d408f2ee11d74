/* Three-dimensional grid and block: every workgroup and workitem id enabled. */
#include "hip_mini.h"

extern "C" __global__ void fill3d(int *out, int nx, int ny)
{
	int x = bid_x() * bdim_x() + tid_x();
	int y = bid_y() * bdim_y() + tid_y();
	int z = bid_z() * 4 + tid_z();
	out[(z * ny + y) * nx + x] = x + y + z;
}
