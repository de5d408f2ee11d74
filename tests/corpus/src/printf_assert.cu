// printf and assert: pull in the vprintf / __assertfail extern functions and
// string constants in .global.
#include <cstdio>
#include <cassert>

__global__ void say_hello(const int *v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		printf("thread %d value %d (%s)\n", i, v[i], i & 1 ? "odd" : "even");
}

__global__ void checked(const int *v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	assert(i < n && "index in range");
	assert(v[i] >= 0);
}
