/* Just enough of HIP's device-side vocabulary to build the corpus kernels
 * with clang's -nogpuinc (no HIP headers, no ROCm install needed). */
#ifndef HIP_MINI_H
#define HIP_MINI_H
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define tid_x() __builtin_amdgcn_workitem_id_x()
#define tid_y() __builtin_amdgcn_workitem_id_y()
#define tid_z() __builtin_amdgcn_workitem_id_z()
#define bid_x() __builtin_amdgcn_workgroup_id_x()
#define bid_y() __builtin_amdgcn_workgroup_id_y()
#define bid_z() __builtin_amdgcn_workgroup_id_z()
#define bdim_x() __builtin_amdgcn_workgroup_size_x()
#define bdim_y() __builtin_amdgcn_workgroup_size_y()
#define syncthreads() __builtin_amdgcn_s_barrier()

/* What clang's host side of a kernel calls: the kernel stub launches
 * through hipLaunchKernel, <<<>>> goes through the call configuration. */
#ifndef __HIP_DEVICE_COMPILE__
#include <stddef.h>
struct dim3 {
	unsigned x, y, z;
	dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
typedef struct ihipStream_t *hipStream_t;
typedef int hipError_t;
extern "C" hipError_t hipLaunchKernel(const void *f, dim3 grid, dim3 block, void **args, size_t shmem,
				      hipStream_t stream);
extern "C" hipError_t __hipPushCallConfiguration(dim3 grid, dim3 block, size_t shmem, hipStream_t stream);
extern "C" hipError_t __hipPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem, hipStream_t *stream);
#endif
#endif
