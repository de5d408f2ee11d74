/* AMDGPU metadata decoding and the one edit a probe needs (see
 * amdgpu_meta.h). Missing optional keys read as 0 / ""; missing required
 * ones (.name, .symbol, .kernarg_segment_size, an argument's .offset,
 * .size, .value_kind) fail naming the kernel and argument. */
#include "engine/amdgpu/amdgpu_meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

static uint32_t meta_u32(const struct msgpack_node *map, const char *key)
{
	uint64_t v = 0;
	if (msgpack_get_uint(msgpack_map_get(map, key), &v) < 0 || v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

static int meta_need_u32(const struct msgpack_node *map, const char *key, uint32_t *out)
{
	uint64_t v;
	if (msgpack_get_uint(msgpack_map_get(map, key), &v) < 0 || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static void meta_str(const struct msgpack_node *map, const char *key, char *buf, size_t len)
{
	const struct msgpack_node *n = msgpack_map_get(map, key);
	buf[0] = 0;
	if (n && n->type == MSGPACK_STR)
		snprintf(buf, len, "%s", n->str);
}

static int meta_arg(const struct msgpack_node *a, struct amdgpu_meta_arg *arg, const char *kname, int i,
		    char **cause)
{
	if (a->type != MSGPACK_MAP || meta_need_u32(a, ".offset", &arg->offset) < 0 ||
	    meta_need_u32(a, ".size", &arg->size) < 0)
		return cause_set(cause, "AMDGPU metadata: kernel %s argument %d lacks .offset or .size", kname, i);
	meta_str(a, ".value_kind", arg->value_kind, sizeof arg->value_kind);
	if (!arg->value_kind[0])
		return cause_set(cause, "AMDGPU metadata: kernel %s argument %d lacks .value_kind", kname, i);
	meta_str(a, ".address_space", arg->address_space, sizeof arg->address_space);
	meta_str(a, ".name", arg->name, sizeof arg->name);
	return 0;
}

static int meta_args(const struct msgpack_node *k, struct amdgpu_meta_kernel *mk, char **cause)
{
	const struct msgpack_node *args = msgpack_map_get(k, ".args");
	free(mk->args);
	mk->args = NULL;
	mk->n_args = mk->n_explicit = 0;
	if (!args)
		return 0;
	if (args->type != MSGPACK_ARRAY)
		return cause_set(cause, "AMDGPU metadata: kernel %s's .args is not an array", mk->name);
	if (args->len) {
		mk->args = calloc(args->len, sizeof *mk->args);
		if (!mk->args)
			return cause_set(cause, "out of memory reading AMDGPU metadata");
	}
	for (uint32_t i = 0; i < args->len; i++) {
		if (meta_arg(&args->kids[i], &mk->args[i], mk->name, (int)i, cause) < 0)
			return -1;
		mk->n_args++;
		if (strncmp(mk->args[i].value_kind, "hidden_", 7) != 0)
			mk->n_explicit++;
	}
	return 0;
}

static char *meta_dup(const struct msgpack_node *k, const char *key)
{
	const struct msgpack_node *n = msgpack_map_get(k, key);
	return n && n->type == MSGPACK_STR ? strdup(n->str) : NULL;
}

static int meta_kernel(const struct msgpack_node *k, struct amdgpu_meta_kernel *mk, int i, char **cause)
{
	if (k->type != MSGPACK_MAP)
		return cause_set(cause, "AMDGPU metadata: amdhsa.kernels[%d] is not a map", i);
	mk->name = meta_dup(k, ".name");
	mk->symbol = meta_dup(k, ".symbol");
	if (!mk->name || !mk->symbol)
		return cause_set(cause, "AMDGPU metadata: amdhsa.kernels[%d] lacks .name or .symbol", i);
	if (meta_need_u32(k, ".kernarg_segment_size", &mk->kernarg_size) < 0)
		return cause_set(cause, "AMDGPU metadata: kernel %s lacks .kernarg_segment_size", mk->name);
	mk->kernarg_align = meta_u32(k, ".kernarg_segment_align");
	mk->group_segment = meta_u32(k, ".group_segment_fixed_size");
	mk->private_segment = meta_u32(k, ".private_segment_fixed_size");
	mk->sgpr_count = meta_u32(k, ".sgpr_count");
	mk->vgpr_count = meta_u32(k, ".vgpr_count");
	mk->agpr_count = meta_u32(k, ".agpr_count");
	mk->sgpr_spill = meta_u32(k, ".sgpr_spill_count");
	mk->vgpr_spill = meta_u32(k, ".vgpr_spill_count");
	mk->wavefront_size = meta_u32(k, ".wavefront_size");
	mk->max_flat_wg = meta_u32(k, ".max_flat_workgroup_size");
	const struct msgpack_node *dyn = msgpack_map_get(k, ".uses_dynamic_stack");
	mk->uses_dynamic_stack = dyn && dyn->type == MSGPACK_BOOL && dyn->v.u;
	return meta_args(k, mk, cause);
}

static int meta_top(struct amdgpu_meta *m, char **cause)
{
	const struct msgpack_node *r = &m->root;
	if (r->type != MSGPACK_MAP)
		return cause_set(cause, "AMDGPU metadata is not a msgpack map");
	meta_str(r, "amdhsa.target", m->target, sizeof m->target);
	const struct msgpack_node *v = msgpack_map_get(r, "amdhsa.version");
	if (v && v->type == MSGPACK_ARRAY && v->len == 2) {
		uint64_t a = 0, b = 0;
		msgpack_get_uint(&v->kids[0], &a);
		msgpack_get_uint(&v->kids[1], &b);
		m->version[0] = (unsigned)a;
		m->version[1] = (unsigned)b;
	}
	const struct msgpack_node *ks = msgpack_map_get(r, "amdhsa.kernels");
	if (!ks)
		return 0; /* a code object of device functions only */
	if (ks->type != MSGPACK_ARRAY)
		return cause_set(cause, "AMDGPU metadata: amdhsa.kernels is not an array");
	if (ks->len) {
		m->kernels = calloc(ks->len, sizeof *m->kernels);
		if (!m->kernels)
			return cause_set(cause, "out of memory reading AMDGPU metadata");
	}
	for (uint32_t i = 0; i < ks->len; i++) {
		m->n_kernels++;
		if (meta_kernel(&ks->kids[i], &m->kernels[i], (int)i, cause) < 0)
			return -1;
	}
	return 0;
}

int amdgpu_meta_read(const uint8_t *p, size_t n, struct amdgpu_meta *m, char **cause)
{
	memset(m, 0, sizeof *m);
	if (msgpack_read(p, n, &m->root, cause) < 0)
		return cause_wrap(cause, "AMDGPU metadata");
	if (meta_top(m, cause) < 0) {
		amdgpu_meta_done(m);
		return -1;
	}
	return 0;
}

void amdgpu_meta_done(struct amdgpu_meta *m)
{
	for (int i = 0; i < m->n_kernels; i++) {
		free(m->kernels[i].name);
		free(m->kernels[i].symbol);
		free(m->kernels[i].args);
	}
	free(m->kernels);
	msgpack_free(&m->root);
	memset(m, 0, sizeof *m);
}

static int meta_kernel_index(const struct amdgpu_meta *m, const char *name)
{
	size_t len = strlen(name);
	for (int i = 0; i < m->n_kernels; i++) {
		const struct amdgpu_meta_kernel *k = &m->kernels[i];
		if (strcmp(k->name, name) == 0 || strcmp(k->symbol, name) == 0)
			return i;
		size_t sl = strlen(k->symbol);
		if (sl == len + 3 && strncmp(k->symbol, name, len) == 0 && strcmp(k->symbol + len, ".kd") == 0)
			return i;
	}
	return -1;
}

const struct amdgpu_meta_kernel *amdgpu_meta_kernel(const struct amdgpu_meta *m, const char *name)
{
	int i = meta_kernel_index(m, name);
	return i < 0 ? NULL : &m->kernels[i];
}

/* Fills a fresh argument map the way LLVM writes one (keys sorted;
 * by_value arguments have no address space). */
static int meta_fill_arg(struct msgpack_node *a, const char *name, uint32_t offset, uint32_t size, int buffer)
{
	struct msgpack_node *v;
	a->type = MSGPACK_MAP;
	if (buffer && (!(v = msgpack_map_put(a, ".address_space")) || msgpack_set_str(v, "global") < 0))
		return -1;
	if (!(v = msgpack_map_put(a, ".name")) || msgpack_set_str(v, name) < 0)
		return -1;
	if (!(v = msgpack_map_put(a, ".offset")))
		return -1;
	msgpack_set_uint(v, offset);
	if (!(v = msgpack_map_put(a, ".size")))
		return -1;
	msgpack_set_uint(v, size);
	if (!(v = msgpack_map_put(a, ".value_kind")) || msgpack_set_str(v, buffer ? "global_buffer" : "by_value") < 0)
		return -1;
	return 0;
}

static int meta_append(struct amdgpu_meta *m, const char *kernel, const char *name, uint32_t size, int buffer,
		       uint32_t *offset, char **cause)
{
	int i = meta_kernel_index(m, kernel);
	if (i < 0)
		return cause_set(cause, "AMDGPU metadata has no kernel %s", kernel);
	struct msgpack_node *k = &msgpack_map_get_mut(&m->root, "amdhsa.kernels")->kids[i];
	struct amdgpu_meta_kernel *mk = &m->kernels[i];
	if (size == 0 || size > 1024 || mk->kernarg_size > UINT32_MAX - 2048)
		return cause_set(cause, "kernel %s's kernarg segment is too large to extend", kernel);
	uint32_t off = (mk->kernarg_size + 7u) & ~7u;
	struct msgpack_node *args = msgpack_map_put(k, ".args");
	if (args && args->type == MSGPACK_NIL)
		args->type = MSGPACK_ARRAY;
	struct msgpack_node *a = args && args->type == MSGPACK_ARRAY ? msgpack_array_push(args) : NULL;
	struct msgpack_node *sz = msgpack_map_put(k, ".kernarg_segment_size");
	if (!a || !sz || meta_fill_arg(a, name, off, size, buffer) < 0)
		return cause_set(cause, "out of memory extending kernel %s's metadata", kernel);
	msgpack_set_uint(sz, (uint64_t)off + size);
	mk->kernarg_size = off + size;
	*offset = off;
	return meta_args(k, mk, cause);
}

int amdgpu_meta_append_buffer(struct amdgpu_meta *m, const char *kernel, const char *name, uint32_t *offset,
			      char **cause)
{
	return meta_append(m, kernel, name, 8, 1, offset, cause);
}

int amdgpu_meta_append_value(struct amdgpu_meta *m, const char *kernel, const char *name, uint32_t size,
			     uint32_t *offset, char **cause)
{
	return meta_append(m, kernel, name, size, 0, offset, cause);
}

int amdgpu_meta_set_count(struct amdgpu_meta *m, const char *kernel, const char *key, uint32_t value,
			  char **cause)
{
	int i = meta_kernel_index(m, kernel);
	if (i < 0)
		return cause_set(cause, "AMDGPU metadata has no kernel %s", kernel);
	struct msgpack_node *k = &msgpack_map_get_mut(&m->root, "amdhsa.kernels")->kids[i];
	struct msgpack_node *v = msgpack_map_put(k, key);
	if (!v)
		return cause_set(cause, "out of memory editing kernel %s's metadata", kernel);
	msgpack_set_uint(v, value);
	struct amdgpu_meta_kernel *mk = &m->kernels[i];
	mk->sgpr_count = meta_u32(k, ".sgpr_count");
	mk->vgpr_count = meta_u32(k, ".vgpr_count");
	mk->agpr_count = meta_u32(k, ".agpr_count");
	return 0;
}

int amdgpu_meta_write(const struct amdgpu_meta *m, uint8_t **out, size_t *len, char **cause)
{
	return msgpack_write(&m->root, out, len, cause);
}
