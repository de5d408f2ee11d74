/* Host side of the AMD map layout (see amdgpu_map.h); the device side is
 * amdgpu_emit.c's prologue and SAVE: both change together. */
#include "engine/amdgpu/amdgpu_map.h"

uint64_t amdgpu_map_units(const struct probe_map *m, uint64_t blocks, uint32_t threads, int wave)
{
	uint64_t per = m->level == PROBE_LEVEL_WARP ? ((uint64_t)threads + (uint64_t)wave - 1) / (uint64_t)wave : threads;
	if (per && blocks > UINT64_MAX / per)
		return 0;
	return blocks * per;
}

uint64_t amdgpu_map_records_offset(uint64_t units)
{
	return (units * 4 + 15) & ~(uint64_t)15;
}

uint64_t amdgpu_map_bytes(const struct probe_map *m, uint64_t blocks, uint32_t threads, int wave)
{
	uint64_t units = amdgpu_map_units(m, blocks, threads, wave);
	uint64_t per_unit = (uint64_t)m->cap * m->rec_size;
	if (units == 0 || units > (UINT64_MAX - 15) / 4 || (per_unit && units > UINT64_MAX / 2 / per_unit))
		return 0;
	return amdgpu_map_records_offset(units) + units * per_unit;
}

uint64_t amdgpu_map_record_index(const struct probe_map *m, uint64_t units, uint64_t unit, uint32_t slot)
{
	if (m->level == PROBE_LEVEL_THREAD && m->cap > 1)
		return (uint64_t)slot * units + unit;
	return unit * m->cap + slot;
}

void amdgpu_map_launch(uint32_t out[8], const uint32_t grid[3], const uint32_t block[3], int wave)
{
	uint32_t threads = block[0] * block[1] * block[2];
	uint64_t blocks = (uint64_t)grid[0] * grid[1] * grid[2];
	out[0] = grid[0];
	out[1] = grid[1];
	out[2] = block[0];
	out[3] = block[0] * block[1];
	out[4] = threads;
	out[5] = (threads + (uint32_t)wave - 1) / (uint32_t)wave;
	out[6] = (uint32_t)(blocks * threads);
	out[7] = (uint32_t)(blocks * out[5]);
}
