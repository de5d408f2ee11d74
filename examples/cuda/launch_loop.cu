/* Launch-bound: an empty kernel launched back to back with cudaLaunchKernel.
 * Measures what the hook adds to every launch when nothing is probed.
 * Usage: launch_loop [launches] (200000). Prints the host wall time of the
 * measured loop (after 1000 warm-up launches, ended by a synchronize). */
#include <chrono>
#include "common.h"

__global__ void empty_kernel(int unused)
{
	(void)unused;
}

static void launch_n(long n)
{
	int arg = 0;
	void *args[] = { &arg };
	for (long i = 0; i < n; i++)
		CK(cudaLaunchKernel((const void *)empty_kernel, dim3(1), dim3(32), args, 0, 0));
}

int main(int argc, char **argv)
{
	long launches = arg_long(argc, argv, 1, 200000);
	launch_n(1000);
	CK_LAUNCH();
	auto t0 = std::chrono::steady_clock::now();
	launch_n(launches);
	CK_LAUNCH();
	auto t1 = std::chrono::steady_clock::now();
	double s = std::chrono::duration<double>(t1 - t0).count();
	printf("info: wall_s=%.6f launches_per_s=%.0f us_per_launch=%.3f\n", s, launches / s, s * 1e6 / launches);
	printf("launch_loop ok launches=%ld\n", launches);
	return 0;
}
