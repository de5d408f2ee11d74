/* Host side of the AMD map layout and launch block the injected code uses
 * (amdgpu_inject.h): what the HIP hook allocates and passes, and what the
 * tests read back. Mirrors engine.h's PTX layout, with waves of 32 or 64
 * lanes in place of warps of 32. Block sampling is not implemented for AMD
 * maps. */
#ifndef NTOP_AMDGPU_MAP_H
#define NTOP_AMDGPU_MAP_H
#include <stdint.h>

#include "engine/probe/probe.h"

/* Units of a launch: work-items (thread maps) or waves (wave maps, ceil(
 * threads / wave) per block). 0 on overflow. */
uint64_t amdgpu_map_units(const struct probe_map *m, uint64_t blocks, uint32_t threads, int wave);
/* The record area's offset in the buffer: the u32 counts, 16-aligned. */
uint64_t amdgpu_map_records_offset(uint64_t units);
/* Bytes of the buffer; 0 on overflow. */
uint64_t amdgpu_map_bytes(const struct probe_map *m, uint64_t blocks, uint32_t threads, int wave);
/* Index of unit's record `slot` in the record area (slot-major for thread
 * maps with cap > 1, unit-major otherwise). */
uint64_t amdgpu_map_record_index(const struct probe_map *m, uint64_t units, uint64_t unit, uint32_t slot);
/* The 32-byte ntop_launch block: grid x, grid y, block x, block x*y,
 * work-items per block, waves per block, work-item units, wave units. */
void amdgpu_map_launch(uint32_t out[8], const uint32_t grid[3], const uint32_t block[3], int wave);

#endif
