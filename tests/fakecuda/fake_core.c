/* fakecuda core: init, devices, contexts, memory, events, streams and
 * capture, cuGetProcAddress and a private export table. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fake.h"

pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
int fake_global_captures;
static int fake_globals_broken; /* an unsafe call hit the global-mode captures in progress */
static int fake_inited;
static unsigned long fake_unsafe_tolerated; /* unsafe calls from relaxed threads during a global capture */
static __thread CUcontext fake_current;
static __thread CUstreamCaptureMode fake_thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
int fake_ctx_storage[4];

void *fake_keep(void *p)
{
	static void **kept;
	static size_t n, cap;
	pthread_mutex_lock(&fake_lock);
	if (n == cap) {
		size_t c = cap ? cap * 2 : 64;
		void **v = realloc(kept, c * sizeof *v);
		if (v) {
			kept = v;
			cap = c;
		}
	}
	if (n < cap)
		kept[n++] = p;
	pthread_mutex_unlock(&fake_lock);
	return p;
}

FAKE_EXPORT CUresult cuInit(unsigned int flags)
{
	(void)flags;
	fake_inited = 1;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDriverGetVersion(int *v)
{
	*v = 13000;
	return CUDA_SUCCESS;
}

/* FAKECUDA_DEVICES=N (1 to 4, default 1): devices 0..N-1, alike; each has
 * one context (created or primary) at its own address. */
int fake_n_devices(void)
{
	const char *e = getenv("FAKECUDA_DEVICES");
	int n = e ? atoi(e) : 1;
	return n < 1 ? 1 : n > 4 ? 4 : n;
}

int fake_valid_device(CUdevice d)
{
	return d >= 0 && d < fake_n_devices();
}

FAKE_EXPORT CUresult cuDeviceGetCount(int *n)
{
	if (!fake_inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	*n = fake_n_devices();
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	if (!fake_valid_device(ordinal))
		return CUDA_ERROR_INVALID_DEVICE;
	*d = ordinal;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	(void)d;
	snprintf(name, (size_t)len, "Fake GPU");
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)d;
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = FAKE_SMS; break;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1000000; break;
	default: *v = 0;
	}
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxCreate_v4(CUcontext *c, CUctxCreateParams *p, unsigned int flags, CUdevice d)
{
	(void)p, (void)flags;
	if (!fake_valid_device(d))
		return CUDA_ERROR_INVALID_DEVICE;
	*c = (CUcontext)&fake_ctx_storage[d];
	fake_current = *c;
	fake_current_gen = fake_ctx_gen + 1;
	return CUDA_SUCCESS;
}


FAKE_EXPORT CUresult cuCtxGetCurrent(CUcontext *c)
{
	*c = fake_current;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext c)
{
	fake_current = c;
	fake_current_gen = c ? fake_ctx_gen + 1 : 0;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	*d = (CUdevice)((int *)fake_current - fake_ctx_storage);
	return CUDA_SUCCESS;
}

static CUresult fake_unsafe_call(void);

FAKE_EXPORT CUresult cuCtxSynchronize(void)
{
	fake_watch_note(FAKE_WATCH_SYNC);
	return fake_unsafe_call();
}

/* A "potentially unsafe" call (allocation, a wait on the device) while some
 * thread captures in global mode, from a thread not in relaxed mode: CUDA
 * fails it and invalidates those captures (their EndCapture then fails). */
static CUresult fake_unsafe_call(void)
{
	pthread_mutex_lock(&fake_lock);
	int bad = fake_global_captures > 0 && fake_thread_mode != CU_STREAM_CAPTURE_MODE_RELAXED;
	if (bad)
		fake_globals_broken = 1;
	else if (fake_global_captures > 0)
		fake_unsafe_tolerated++;
	pthread_mutex_unlock(&fake_lock);
	return bad ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

/* How many unsafe calls relaxed threads made during global captures (a
 * test's proof that the hook's threads ran while the app captured). */
FAKE_EXPORT unsigned long fakecuda_unsafe_tolerated(void)
{
	pthread_mutex_lock(&fake_lock);
	unsigned long n = fake_unsafe_tolerated;
	pthread_mutex_unlock(&fake_lock);
	return n;
}

static CUresult fake_alloc_allowed(void)
{
	fake_watch_note(FAKE_WATCH_ALLOC);
	CUresult rc = fake_current_alive("an allocation");
	return rc == CUDA_SUCCESS ? fake_unsafe_call() : rc;
}

FAKE_EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	CUstreamCaptureMode old = fake_thread_mode;
	fake_thread_mode = *mode;
	*mode = old;
	return CUDA_SUCCESS;
}

/* FAKECUDA_DEV_MEM=BYTES: the device's memory (unset: 16 GiB, never full).
 * Live allocations are tracked so frees give their bytes back. */
#define FAKE_DEV_LIVE 4096
static struct {
	uintptr_t p[FAKE_DEV_LIVE];
	size_t len[FAKE_DEV_LIVE];
	size_t used;
} fake_dev;

static size_t fake_dev_limit(void)
{
	const char *v = getenv("FAKECUDA_DEV_MEM");
	return v ? (size_t)strtoull(v, NULL, 0) : 0;
}

void fake_dev_mem(size_t *free_b, size_t *total_b)
{
	size_t limit = fake_dev_limit();
	pthread_mutex_lock(&fake_lock);
	*total_b = limit ? limit : (size_t)16 << 30;
	*free_b = limit ? limit - fake_dev.used : (size_t)15 << 30;
	pthread_mutex_unlock(&fake_lock);
}

/* Room for len more bytes (counted when there is): 0, or out of memory. */
static CUresult fake_dev_take(size_t len)
{
	size_t limit = fake_dev_limit();
	if (!limit)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&fake_lock);
	int room = fake_dev.used + len <= limit;
	fake_dev.used += room ? len : 0;
	pthread_mutex_unlock(&fake_lock);
	return room ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static void fake_dev_note(uintptr_t p, size_t len)
{
	if (!fake_dev_limit())
		return;
	pthread_mutex_lock(&fake_lock);
	for (int i = 0; i < FAKE_DEV_LIVE; i++)
		if (!fake_dev.p[i]) {
			fake_dev.p[i] = p;
			fake_dev.len[i] = len;
			break;
		}
	pthread_mutex_unlock(&fake_lock);
}

static void fake_dev_forget(uintptr_t p)
{
	pthread_mutex_lock(&fake_lock);
	for (int i = 0; p && i < FAKE_DEV_LIVE; i++)
		if (fake_dev.p[i] == p) {
			fake_dev.used -= fake_dev.len[i];
			fake_dev.p[i] = 0;
			break;
		}
	pthread_mutex_unlock(&fake_lock);
}

/* FAKECUDA_ALLOC_DELAY_US: every cuMemAlloc takes this long, as a real
 * one holds the driver a while (a test can then see a launch queued
 * beside the hook's own allocation). */
static void fake_alloc_delay(void)
{
	const char *v = getenv("FAKECUDA_ALLOC_DELAY_US");
	long us = v ? strtol(v, NULL, 10) : 0;
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };
	if (us > 0)
		nanosleep(&ts, NULL);
}

FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	fake_alloc_delay();
	CUresult rc = fake_alloc_allowed();
	if (rc != CUDA_SUCCESS)
		return rc;
	size_t len = n ? (n + 255) / 256 * 256 : 256;
	if (fake_dev_take(len) != CUDA_SUCCESS)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* Aligned as the real driver's (at least 256 bytes: the hook puts the
	 * block-sampling shift in a map pointer's low bits, fake_fill_map masks
	 * them off); kept reachable: a context's destruction frees its memory. */
	void *m = NULL;
	if (posix_memalign(&m, 512, len) == 0)
		memset(m, 0, len);
	else
		m = NULL;
	m = fake_keep(m);
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fake_dev_note((uintptr_t)m, len);
	*p = (CUdeviceptr)(uintptr_t)m;
	return CUDA_SUCCESS;
}

/* The virtual memory API's physical allocations: counted against
 * FAKECUDA_DEV_MEM like cuMemAlloc's, never mapped (nothing here uses them). */
FAKE_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t n, const CUmemAllocationProp *prop,
				 unsigned long long flags)
{
	static uintptr_t next_handle = 1;
	(void)prop;
	(void)flags;
	CUresult rc = fake_alloc_allowed();
	if (rc != CUDA_SUCCESS || (rc = fake_dev_take(n)) != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&fake_lock);
	uintptr_t h = next_handle++;
	pthread_mutex_unlock(&fake_lock);
	fake_dev_note(h, n);
	*handle = (CUmemGenericAllocationHandle)h;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	fake_dev_forget((uintptr_t)handle);
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	if (fake_unsafe_call() != CUDA_SUCCESS)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	fake_dev_forget((uintptr_t)p);
	free((void *)(uintptr_t)p);
	return CUDA_SUCCESS;
}

/* FAKECUDA_HOST_ALLOC_MAX=BYTES: larger pinned allocations fail (the
 * hook must stage big results through small pinned buffers). */
FAKE_EXPORT CUresult cuMemAllocHost_v2(void **p, size_t n)
{
	CUresult rc = fake_alloc_allowed();
	if (rc != CUDA_SUCCESS)
		return rc;
	const char *max = getenv("FAKECUDA_HOST_ALLOC_MAX");
	if (max && n > strtoull(max, NULL, 0))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*p = fake_keep(calloc(1, n ? n : 1));
	return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Registered ranges, as the driver keeps them: a copy into host memory that
 * starts in one must end in it (the driver says CUDA_ERROR_INVALID_VALUE
 * to a copy spanning two, bench/pinned_stall.c), and a registration dies
 * with the context current when it was made. FAKECUDA_HOST_ALLOC_MAX
 * applies here too. FAKECUDA_PINNED_ONLY=1: an async copy into host memory
 * no live registration holds fails (the driver would copy synchronously:
 * a hook that lost its registrations is slow, and this makes it visible). */
#define FAKE_REGS 4096
static struct {
	uintptr_t lo, hi;
	unsigned gen; /* fake_ctx_gen when registered */
} fake_hostregs[FAKE_REGS];
static int fake_nhostregs;
static pthread_mutex_t fake_hostregs_lock = PTHREAD_MUTEX_INITIALIZER;

/* A fork child starts without the parent's registrations, as with a real
 * driver (whose memory the child may map anew at the same addresses). */
static void fake_hostregs_forget(void)
{
	fake_nhostregs = 0;
	pthread_mutex_init(&fake_hostregs_lock, NULL);
}

__attribute__((constructor)) static void fake_hostregs_init(void)
{
	pthread_atfork(NULL, NULL, fake_hostregs_forget);
}

FAKE_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned int flags)
{
	(void)flags;
	CUresult rc = fake_alloc_allowed();
	if (rc != CUDA_SUCCESS)
		return rc;
	const char *max = getenv("FAKECUDA_HOST_ALLOC_MAX");
	if (!p || !n || (max && n > strtoull(max, NULL, 0)))
		return !p || !n ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
	unsigned gen = __atomic_load_n(&fake_ctx_gen, __ATOMIC_ACQUIRE);
	uintptr_t lo = (uintptr_t)p, hi = lo + n;
	pthread_mutex_lock(&fake_hostregs_lock);
	rc = fake_nhostregs < FAKE_REGS ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
	for (int i = 0; i < fake_nhostregs && rc == CUDA_SUCCESS; i++)
		if (fake_hostregs[i].gen == gen && lo < fake_hostregs[i].hi && hi > fake_hostregs[i].lo)
			rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	if (rc == CUDA_SUCCESS) {
		fake_hostregs[fake_nhostregs].lo = (uintptr_t)p;
		fake_hostregs[fake_nhostregs].hi = (uintptr_t)p + n;
		fake_hostregs[fake_nhostregs++].gen = gen;
	}
	pthread_mutex_unlock(&fake_hostregs_lock);
	return rc;
}

/* Can an async copy go to [h, h+n)? Not when it begins in a registration
 * and leaves it; under FAKECUDA_PINNED_ONLY=1 only inside a live one. */
static int fake_spans_regs(const void *h, size_t n)
{
	uintptr_t lo = (uintptr_t)h, hi = lo + n;
	unsigned gen = __atomic_load_n(&fake_ctx_gen, __ATOMIC_ACQUIRE);
	const char *strict = getenv("FAKECUDA_PINNED_ONLY");
	int bad = 0, inside = 0;
	pthread_mutex_lock(&fake_hostregs_lock);
	for (int i = 0; i < fake_nhostregs && !bad; i++) {
		int in = fake_hostregs[i].gen == gen && lo >= fake_hostregs[i].lo && lo < fake_hostregs[i].hi;
		bad = in && hi > fake_hostregs[i].hi;
		inside |= in;
	}
	pthread_mutex_unlock(&fake_hostregs_lock);
	return bad || (strict && *strict == '1' && !inside);
}

FAKE_EXPORT CUresult cuMemFreeHost(void *p)
{
	if (fake_unsafe_call() != CUDA_SUCCESS)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	free(p);
	return CUDA_SUCCESS;
}

int fake_capture_blocks(CUstream s)
{
	struct fake_stream *fs = (struct fake_stream *)s;
	return fs && fs != (struct fake_stream *)CU_STREAM_PER_THREAD && fs->capturing;
}

void fake_invalidate(CUstream s)
{
	((struct fake_stream *)s)->invalidated = 1;
}

/* Copies and memsets on a capturing stream would become graph nodes in CUDA;
 * the fake treats them as a hook bug: the capture is invalidated. */
static CUresult fake_stream_op(CUstream s)
{
	if (s && s != CU_STREAM_PER_THREAD && s != CU_STREAM_LEGACY &&
	    fake_ctx_alive(((struct fake_stream *)s)->gen, "a stream") != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!fake_capture_blocks(s))
		return CUDA_SUCCESS;
	fake_invalidate(s);
	return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
}

FAKE_EXPORT CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s)
{
	CUresult rc = fake_stream_op(s);
	if (rc == CUDA_SUCCESS)
		memset((void *)(uintptr_t)p, v, n);
	return rc;
}

FAKE_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n)
{
	if (fake_unsafe_call() != CUDA_SUCCESS)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	memcpy((void *)(uintptr_t)d, h, n);
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n)
{
	if (fake_unsafe_call() != CUDA_SUCCESS)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	memcpy(h, (void *)(uintptr_t)d, n);
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, CUstream s)
{
	CUresult rc = fake_stream_op(s);
	if (rc == CUDA_SUCCESS && fake_spans_regs(h, n))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS)
		memcpy(h, (void *)(uintptr_t)d, n);
	return rc;
}

/* The 2D forms the hook uses for a sampled map's kept counts (device to
 * host copies only). */
FAKE_EXPORT CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *c, CUstream s)
{
	CUresult rc = fake_stream_op(s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (c->srcMemoryType != CU_MEMORYTYPE_DEVICE || c->dstMemoryType != CU_MEMORYTYPE_HOST ||
	    c->srcPitch < c->WidthInBytes || c->dstPitch < c->WidthInBytes ||
	    (c->Height && fake_spans_regs(c->dstHost, (c->Height - 1) * c->dstPitch + c->WidthInBytes)))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t r = 0; r < c->Height; r++)
		memcpy((uint8_t *)c->dstHost + r * c->dstPitch, (const uint8_t *)(uintptr_t)c->srcDevice + r * c->srcPitch,
		       c->WidthInBytes);
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemsetD2D8Async(CUdeviceptr p, size_t pitch, unsigned char v, size_t w, size_t h, CUstream s)
{
	CUresult rc = fake_stream_op(s);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (pitch < w)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t r = 0; r < h; r++)
		memset((void *)(uintptr_t)(p + r * pitch), v, w);
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s)
{
	CUresult rc = fake_stream_op(s);
	if (rc == CUDA_SUCCESS)
		memmove((void *)(uintptr_t)d, (void *)(uintptr_t)src, n);
	return rc;
}

struct fake_event {
	uint64_t ns;
	int recorded;
	int busy; /* queries still to answer "not ready" (FAKECUDA_QUERY_BUSY) */
	int timing; /* not CU_EVENT_DISABLE_TIMING: cuEventElapsedTime refuses those, as the driver does */
	unsigned gen;
};

static uint64_t fake_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

FAKE_EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
	/* kept reachable: a context's destruction frees its events in a real
	 * driver, so a hook may rightly drop them without cuEventDestroy */
	if (fake_current_alive("cuEventCreate") != CUDA_SUCCESS)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	struct fake_event *fe = fake_keep(calloc(1, sizeof *fe));
	if (fe) {
		fe->gen = fake_ctx_gen;
		fe->timing = !(flags & CU_EVENT_DISABLE_TIMING);
	}
	*e = (CUevent)fe;
	return fe ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FAKE_EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
	fake_watch_note(FAKE_WATCH_RECORD);
	if (((struct fake_event *)e)->timing)
		fake_watch_note(FAKE_WATCH_RECORD_TIMING);
	CUresult rc = fake_ctx_alive(((struct fake_event *)e)->gen, "cuEventRecord");
	if (rc == CUDA_SUCCESS)
		rc = fake_stream_op(s);
	if (rc != CUDA_SUCCESS)
		return rc;
	struct fake_event *fe = (struct fake_event *)e;
	fe->ns = fake_now();
	fe->recorded = 1;
	/* FAKECUDA_QUERY_BUSY=N: the first N queries after a record say "not
	 * ready", as a real event does while its stream's work runs */
	const char *busy = getenv("FAKECUDA_QUERY_BUSY");
	fe->busy = busy ? atoi(busy) : 0;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventQuery(CUevent e)
{
	if (fake_ctx_alive(((struct fake_event *)e)->gen, "cuEventQuery") != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_HANDLE;
	if (fake_unsafe_call() != CUDA_SUCCESS)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	fake_watch_note(FAKE_WATCH_QUERY);
	struct fake_event *fe = (struct fake_event *)e;
	if (fe->busy > 0) {
		fe->busy--;
		return CUDA_ERROR_NOT_READY;
	}
	return fe->recorded && fake_now() - fe->ns >= fake_sync_delay_ns() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FAKE_EXPORT CUresult cuEventSynchronize(CUevent e)
{
	fake_watch_note(FAKE_WATCH_SYNC);
	/* FAKECUDA_SAY_EVENT_SYNC: a test that the hook's threads never wait
	 * in the driver this way (a real driver spins there) */
	if (getenv("FAKECUDA_SAY_EVENT_SYNC"))
		fprintf(stderr, "fakecuda: cuEventSynchronize called\n");
	if (fake_ctx_alive(((struct fake_event *)e)->gen, "cuEventSynchronize") != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_HANDLE;
	fake_sync_delay();
	if (fake_unsafe_call() != CUDA_SUCCESS) /* after the wait: a capture begun meanwhile counts */
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	(void)e;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
	struct fake_event *x = (struct fake_event *)a, *y = (struct fake_event *)b;
	if (!x->recorded || !y->recorded || !x->timing || !y->timing)
		return CUDA_ERROR_INVALID_HANDLE;
	*ms = (float)((double)(y->ns - x->ns) / 1e6);
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
	(void)e; /* kept by fake_keep */
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
	(void)flags;
	if (fake_current_alive("cuStreamCreate") != CUDA_SUCCESS)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	struct fake_stream *fs = fake_keep(calloc(1, sizeof(struct fake_stream)));
	if (fs)
		fs->gen = fake_ctx_gen;
	*s = (CUstream)fs;
	return fs ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FAKE_EXPORT CUresult cuStreamSynchronize(CUstream s)
{
	fake_watch_note(FAKE_WATCH_SYNC);
	if (fake_capture_blocks(s))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return fake_unsafe_call();
}

static unsigned long fake_capture_asked; /* cuStreamIsCapturing calls (atomic) */

/* How often anyone asked whether a stream captures (a test's proof that
 * the hook leaves the question out while no capture is open). */
FAKE_EXPORT unsigned long fakecuda_capture_asked(void)
{
	return __atomic_load_n(&fake_capture_asked, __ATOMIC_RELAXED);
}

FAKE_EXPORT CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
	__atomic_add_fetch(&fake_capture_asked, 1, __ATOMIC_RELAXED);
	*st = fake_capture_blocks(s) ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
	struct fake_stream *fs = (struct fake_stream *)s;
	if (!fs || fs->capturing)
		return CUDA_ERROR_INVALID_VALUE;
	fs->capturing = 1;
	fs->invalidated = 0;
	fs->nodes = 0;
	fake_graph_begin_capture(fs);
	if (mode == CU_STREAM_CAPTURE_MODE_GLOBAL) {
		pthread_mutex_lock(&fake_lock);
		if (fake_global_captures++ == 0)
			fake_globals_broken = 0;
		pthread_mutex_unlock(&fake_lock);
		fs->capturing = 2;
	}
	return CUDA_SUCCESS;
}

/* The other ways to begin a capture, each the same here: the legacy
 * cuStreamBeginCapture (no mode: global; cuda.h's name means _v2), _ptsz
 * forms, into a graph. */
#undef cuStreamBeginCapture
FAKE_EXPORT CUresult cuStreamBeginCapture(CUstream s)
{
	return cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

FAKE_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream s)
{
	return cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

FAKE_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode)
{
	return cuStreamBeginCapture_v2(s, mode);
}

FAKE_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *deps,
						 const CUgraphEdgeData *edges, size_t n, CUstreamCaptureMode mode)
{
	(void)g, (void)deps, (void)edges, (void)n;
	return cuStreamBeginCapture_v2(s, mode);
}

FAKE_EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream s, CUgraph g, const CUgraphNode *deps,
						      const CUgraphEdgeData *edges, size_t n, CUstreamCaptureMode mode)
{
	return cuStreamBeginCaptureToGraph(s, g, deps, edges, n, mode);
}

FAKE_EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
	struct fake_stream *fs = (struct fake_stream *)s;
	if (!fs || !fs->capturing)
		return CUDA_ERROR_ILLEGAL_STATE;
	if (fs->capturing == 2) {
		pthread_mutex_lock(&fake_lock);
		fake_global_captures--;
		if (fake_globals_broken)
			fs->invalidated = 1;
		pthread_mutex_unlock(&fake_lock);
	}
	fs->capturing = 0;
	if (fs->invalidated)
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	*g = (CUgraph)fs->graph;
	fs->graph = NULL;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *g)
{
	return cuStreamEndCapture(s, g);
}

/* A private table: slot 1 returns 42, proving the call reached the fake. */
static int fake_private_fn(void)
{
	return 42;
}

static const void *fake_export_table[] = { (void *)(uintptr_t)(2 * sizeof(void *)), (void *)fake_private_fn };

FAKE_EXPORT CUresult cuGetExportTable(const void **table, const CUuuid *id)
{
	(void)id;
	*table = fake_export_table;
	return CUDA_SUCCESS;
}

static void *fake_self_sym(const char *name)
{
	Dl_info info;
	if (!dladdr((void *)cuInit, &info))
		return NULL;
	void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	void *p = h ? dlsym(h, name) : NULL;
	if (h)
		dlclose(h);
	return p;
}

FAKE_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
					 CUdriverProcAddressQueryResult *status)
{
	(void)version;
	char name[256];
	void *p = NULL;
	if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
		snprintf(name, sizeof name, "%s_ptsz", symbol);
		p = fake_self_sym(name);
	}
	if (!p) {
		snprintf(name, sizeof name, "%s_v2", symbol);
		p = fake_self_sym(name);
	}
	if (!p)
		p = fake_self_sym(symbol);
	if (status)
		*status = p ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	*pfn = p;
	return p ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

FAKE_EXPORT CUresult cuGetErrorString(CUresult rc, const char **s)
{
	(void)rc;
	*s = "fake error";
	return CUDA_SUCCESS;
}
