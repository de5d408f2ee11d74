/* Host side of the map buffer layout described in engine.h. The probed
 * kernel (ptx_inject_unit.c) computes the same quantities on the device;
 * both must change together. */
#include "engine/engine.h"

/* Units per block: one per thread, or one per (possibly partial) warp, or
 * the block itself. A block of 33 threads has 2 warps: the second holds
 * one thread. */
static uint64_t map_plan_units_per_block(const struct probe_map *m, uint32_t threads)
{
	if (m->level == PROBE_LEVEL_BLOCK)
		return 1;
	if (m->level == PROBE_LEVEL_WARP)
		return ((uint64_t)threads + 31) / 32;
	return threads;
}

uint64_t engine_map_units(const struct probe_map *m, uint64_t blocks, uint32_t threads)
{
	uint64_t upb = map_plan_units_per_block(m, threads);
	if (upb && blocks > UINT64_MAX / upb)
		return 0;
	return blocks * upb;
}

uint64_t engine_map_records_offset(const struct probe_map *m, uint64_t blocks, uint32_t threads)
{
	uint64_t units = engine_map_units(m, blocks, threads);
	if (units > (UINT64_MAX - 15) / 4)
		return 0;
	return (units * 4 + 15) & ~(uint64_t)15;
}

/* Blocks whose records are kept: ceil(blocks / 2^shift); shift only
 * applies to maps that can be sampled. */
static uint64_t map_plan_kept_blocks(const struct probe_map *m, uint64_t blocks, uint32_t shift)
{
	if (!engine_map_sampled(m) || shift == 0)
		return blocks;
	if (shift > ENGINE_SAMPLE_SHIFT_MAX)
		shift = ENGINE_SAMPLE_SHIFT_MAX;
	return (blocks >> shift) + ((blocks & ((1ull << shift) - 1)) != 0);
}

uint64_t engine_map_rec_units(const struct probe_map *m, uint64_t blocks, uint32_t threads, uint32_t shift)
{
	return engine_map_units(m, map_plan_kept_blocks(m, blocks, shift), threads);
}

uint64_t engine_map_bytes(const struct probe_map *m, uint64_t blocks, uint32_t threads, uint32_t shift)
{
	uint64_t units = engine_map_units(m, blocks, threads);
	uint64_t rec_units = engine_map_rec_units(m, blocks, threads, shift);
	uint64_t off = engine_map_records_offset(m, blocks, threads);
	uint64_t per_unit = (uint64_t)m->cap * m->rec_size;
	if (units == 0 || off == 0)
		return 0;
	if (per_unit && rec_units > (UINT64_MAX - off) / per_unit)
		return 0;
	return off + rec_units * per_unit;
}

uint64_t engine_plan_bytes(const struct engine_result *res, uint64_t blocks, uint32_t threads, uint32_t shift,
			   uint64_t off[ENGINE_MAX_MAPS])
{
	uint64_t total = 0;
	for (int i = 0; i < res->n_maps; i++) {
		uint64_t b = engine_map_bytes(&res->maps[i].map, blocks, threads, shift);
		if (b == 0 || b > UINT64_MAX - 255 || total > UINT64_MAX - ((b + 255) & ~(uint64_t)255))
			return 0;
		if (off)
			off[i] = total;
		total += (b + 255) & ~(uint64_t)255;
	}
	return total ? total : 256;
}

int engine_plan_sampled(const struct engine_result *res)
{
	for (int i = 0; i < res->n_maps; i++)
		if (engine_map_sampled(&res->maps[i].map))
			return 1;
	return 0;
}

int engine_plan_warp_sampled(const struct engine_result *res)
{
	for (int i = 0; i < res->n_maps; i++)
		if (engine_map_sampled(&res->maps[i].map) && res->maps[i].map.level == PROBE_LEVEL_WARP)
			return 1;
	return 0;
}

uint32_t engine_plan_shift(const struct engine_result *res, uint64_t blocks, uint32_t threads, uint32_t min_shift,
			   uint64_t limit)
{
	if (!engine_plan_sampled(res))
		return 0;
	uint32_t k = min_shift < ENGINE_SAMPLE_SHIFT_MAX ? min_shift : ENGINE_SAMPLE_SHIFT_MAX;
	while (k < ENGINE_SAMPLE_SHIFT_MAX && (blocks >> k) > 1) {
		uint64_t b = engine_plan_bytes(res, blocks, threads, k, NULL);
		if (b && b <= limit)
			break;
		k++;
	}
	return k;
}

uint64_t engine_map_kept_unit(const struct probe_map *m, uint64_t blocks, uint32_t threads, uint32_t shift,
			      uint64_t unit)
{
	if (!engine_map_sampled(m) || shift == 0)
		return unit;
	uint64_t upb = map_plan_units_per_block(m, threads);
	uint64_t block = unit / upb;
	if (engine_map_sample_prefix(m))
		return block < map_plan_kept_blocks(m, blocks, shift) ? unit : UINT64_MAX;
	if (block & ((1ull << shift) - 1))
		return UINT64_MAX;
	return (block >> shift) * upb + unit % upb;
}

uint64_t engine_map_unit_index(const struct probe_map *m, const uint32_t grid[3],
			       const uint32_t block[3], const uint32_t ctaid[3],
			       const uint32_t tid[3], int *lane0)
{
	uint64_t block_linear = ((uint64_t)ctaid[2] * grid[1] + ctaid[1]) * grid[0] + ctaid[0];
	uint32_t threads = block[0] * block[1] * block[2];
	uint32_t thread_linear = (tid[2] * block[1] + tid[1]) * block[0] + tid[0];
	uint64_t upb = map_plan_units_per_block(m, threads);
	if (m->level == PROBE_LEVEL_BLOCK) {
		if (lane0)
			*lane0 = thread_linear == 0;
		return block_linear;
	}
	if (m->level == PROBE_LEVEL_WARP) {
		if (lane0)
			*lane0 = thread_linear % 32 == 0;
		return block_linear * upb + thread_linear / 32;
	}
	if (lane0)
		*lane0 = 1;
	return block_linear * upb + thread_linear;
}

/* Warp maps stay unit-major: lane 0 stores for the whole warp, so there is
 * nothing to coalesce, and block_sched-style readers want a warp's records
 * together. With cap 1 both layouts coincide; calling it unit-major keeps
 * such files identical to those written before slot-major existed. */
int engine_map_slot_major(const struct probe_map *m)
{
	return m->level == PROBE_LEVEL_THREAD && m->cap > 1;
}

/* A warp map of many records (regions) grows with warps x cap as a thread
 * map does with threads x cap; block sampling keeps whole warps of the
 * kept blocks, so their timelines stay complete. */
int engine_map_sampled(const struct probe_map *m)
{
	return engine_map_slot_major(m) || engine_map_sample_prefix(m);
}

int engine_map_sample_prefix(const struct probe_map *m)
{
	return m->level == PROBE_LEVEL_WARP && m->cap > 1;
}

uint64_t engine_map_record_index(const struct probe_map *m, uint64_t units, uint64_t unit,
				 uint32_t slot)
{
	if (engine_map_slot_major(m))
		return (uint64_t)slot * units + unit;
	return unit * m->cap + slot;
}

unsigned engine_shape_of(const uint32_t grid[3], const uint32_t block[3])
{
	return (block[1] == 1 && block[2] == 1 ? ENGINE_BLOCK_1D : 0u) |
	       (grid[1] == 1 && grid[2] == 1 ? ENGINE_GRID_1D : 0u);
}

int engine_map_records_clear(const struct probe_map *m)
{
	for (int i = 0; i < m->n_fields; i++)
		if (m->fields[i].fold != PROBE_FOLD_NONE)
			return 1;
	return 0;
}
