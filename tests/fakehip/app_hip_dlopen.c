/* Opens the HIP runtime by the absolute path given (as Python wheels and
 * cuda.pathfinder-style loaders do), calls hipInit and hipGetDeviceCount,
 * and prints which file hipInit came from:
 *   app_hip_dlopen /path/to/libamdhip64.so.5
 * Under ntop's loader audit module that is ntop's HIP stand-in. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
	int (*init)(unsigned) = h ? (int (*)(unsigned))dlsym(h, "hipInit") : NULL;
	int (*count)(int *) = h ? (int (*)(int *))dlsym(h, "hipGetDeviceCount") : NULL;
	Dl_info info;
	int n = -1;
	if (!init || !count || init(0) != 0 || count(&n) != 0 || !dladdr((void *)init, &info)) {
		fprintf(stderr, "app_hip_dlopen: %s\n", h ? "HIP calls failed" : dlerror());
		return 1;
	}
	printf("hipInit from %s, %d device(s)\n", info.dli_fname, n);
	return 0;
}
