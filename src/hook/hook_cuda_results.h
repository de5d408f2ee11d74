/* A probed launch in flight: what the result writer needs once the stream
 * has reached the `done` event. */
#ifndef NTOP_HOOK_CUDA_RESULTS_H
#define NTOP_HOOK_CUDA_RESULTS_H
#include <stdint.h>
#include <cuda.h>
#include "engine/engine.h"
#include "hook/hook_state.h"

struct hook_job {
	struct hook_job *next;
	struct hook_kernel *k;
	const struct engine_result *plan; /* the instrumented copy's maps (lives until exit) */
	uint64_t seq, wall_ns;
	CUcontext ctx;
	CUevent start, end, done;         /* around the probed launch; after the copy back */
	struct hook_buf *dev, *host;
	uint64_t bytes;                   /* map bytes reserved */
	uint64_t map_off[ENGINE_MAX_MAPS];
	uint32_t sample_shift;            /* block sampling of slot-major maps (engine.h) */
	unsigned grid[3], block[3], smem;
	struct hook_device device;
};

#endif
