/* A probed launch's result file and its `result` line, for every backend. */
#ifndef NTOP_HOOK_RESULT_FILE_H
#define NTOP_HOOK_RESULT_FILE_H
#include <stdint.h>
#include "trace/result.h"

/* Writes results/<pid>-<seq>.ntr in the trace directory and emits
 * `result` (r's maps already through result_map_derive_counts); 1 when written, else 0 with a
 * `warn` line saying why. bytes: the launch's map buffer on the device;
 * sample_shift: the block sampling of its slot-major maps (0: none). */
int hook_result_publish(const struct result *r, uint64_t bytes, uint32_t sample_shift);

#endif
