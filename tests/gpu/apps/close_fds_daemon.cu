// A daemon-like program that closes descriptors after CUDA is up:
// after its first kernel it closes every descriptor 3..1023 that is not the
// driver's (the driver's character devices, pipes and anonymous inodes stay
// open: closing them would break CUDA itself, with or without ntop), i.e.
// what it inherited and every socket and regular file opened since (under
// ntop: the hook's event socket or file). It then opens a data file of its
// own and puts that file under every number it closed, writes its own
// bytes, launches more kernels (probed under ntop, so the hook has events
// and results to write), and checks that the file holds only its bytes,
// once after the kernels and once more at exit, after the hook's own exit
// handler ran (ours is registered before the first CUDA call, so it runs
// last). Prints deterministic lines; exit status 1 when a check fails.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("FAIL %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void fill(unsigned *out, unsigned n, unsigned k)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = i * 2654435761u + k;
}

static char g_path[256];
static std::string g_expect; // what the file must hold

static bool fds_open(std::vector<int> &fds)
{
	fds.clear();
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return false;
	int self = dirfd(d);
	while (struct dirent *e = readdir(d)) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && fd != self)
			fds.push_back(fd);
	}
	closedir(d);
	return true;
}

static std::string fd_target(int fd)
{
	char link[64], buf[512];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, sizeof buf - 1);
	if (n < 0)
		return "";
	buf[n] = 0;
	return buf;
}

// The driver's: character devices (/dev/nvidia*), pipes, anonymous inodes
// (eventfd, epoll) and memfds made after start. Closed: anything inherited
// (3 and up), sockets, other regular files.
static bool closable(int fd, const std::vector<int> &at_start)
{
	if (fd < 3 || fd > 1023)
		return false;
	for (int s : at_start)
		if (s == fd)
			return true;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return false;
	if (S_ISSOCK(st.st_mode))
		return true;
	std::string t = fd_target(fd);
	if (!S_ISREG(st.st_mode) || t.rfind("/dev/", 0) == 0 || t.rfind("/memfd:", 0) == 0 ||
	    t.rfind("anon_inode:", 0) == 0)
		return false;
	return true;
}

static bool check_file(const char *when)
{
	int fd = open(g_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("close_fds_daemon %s: data file missing\n", when);
		return false;
	}
	std::string got;
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		got.append(buf, (size_t)n);
	close(fd);
	bool ok = got == g_expect;
	printf("close_fds_daemon %s: data file %s (%zu bytes, want %zu)\n", when, ok ? "ok" : "CORRUPTED",
	       got.size(), g_expect.size());
	if (!ok) {
		size_t i = 0;
		while (i < got.size() && i < g_expect.size() && got[i] == g_expect[i])
			i++;
		fprintf(stderr, "first difference at byte %zu: '%.80s'\n", i, got.c_str() + i);
	}
	return ok;
}

static void at_exit_check(void)
{
	bool ok = check_file("at exit");
	unlink(g_path);
	rmdir(std::string(g_path, strrchr(g_path, '/') - g_path).c_str());
	fflush(stdout);
	if (!ok)
		_exit(1);
}

int main()
{
	std::vector<int> at_start;
	fds_open(at_start);
	char dir[] = "/tmp/close_fds_daemon.XXXXXX";
	if (!mkdtemp(dir)) {
		printf("FAIL mkdtemp\n");
		return 1;
	}
	snprintf(g_path, sizeof g_path, "%s/data.bin", dir);
	atexit(at_exit_check); // before any CUDA call: runs after the hook's exit handler

	const unsigned n = 1u << 20;
	unsigned *d;
	CK(cudaMalloc(&d, n * sizeof(unsigned)));
	fill<<<n / 256, 256>>>(d, n, 1); // the first kernel
	CK(cudaDeviceSynchronize());

	std::vector<int> now, closed;
	fds_open(now);
	for (int fd : now)
		if (closable(fd, at_start) && close(fd) == 0)
			closed.push_back(fd);
	fprintf(stderr, "closed %zu descriptors:", closed.size());
	for (int fd : closed)
		fprintf(stderr, " %d", fd);
	fprintf(stderr, "\n");

	int data = open(g_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	if (data < 0) {
		printf("FAIL open data file\n");
		return 1;
	}
	for (int fd : closed) // every number the program let go now names its file
		if (fd != data)
			dup2(data, fd);
	std::vector<unsigned> h(n);
	unsigned long long sum = 0;
	for (int round = 0; round < 8; round++) {
		char line[128];
		int len = snprintf(line, sizeof line, "close_fds_daemon record %d\n", round);
		if (write(data, line, len) != len) {
			printf("FAIL write\n");
			return 1;
		}
		g_expect.append(line, len);
		for (int k = 0; k < 4; k++)
			fill<<<n / 256, 256>>>(d, n, round * 4 + k);
		CK(cudaGetLastError());
		CK(cudaMemcpy(h.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
		for (unsigned v : h)
			sum += v;
	}
	CK(cudaDeviceSynchronize());
	usleep(300 * 1000); // the hook's writer thread: give queued lines time to land
	printf("close_fds_daemon sum %llu\n", sum);
	bool ok = check_file("after kernels");
	CK(cudaFree(d));
	return ok ? 0 : 1;
}
