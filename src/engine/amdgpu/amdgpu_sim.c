/* The wave model's state, operands and memory (see amdgpu_sim.h);
 * instruction semantics are in amdgpu_sim_ops.c. */
#include "engine/amdgpu/amdgpu_sim_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/amdgpu/amdgpu_code.h"

void amdgpu_sim_init(struct amdgpu_wave *w, enum amdgpu_family f, int lanes)
{
	memset(w, 0, sizeof *w);
	w->family = f;
	w->lanes = lanes == 32 ? 32 : 64;
	w->clock = 1000;
	w->realtime = 500;
}

int amdgpu_sim_map(struct amdgpu_wave *w, uint64_t addr, uint8_t *p, size_t len)
{
	if (w->n_mem == AMDGPU_SIM_MEMS)
		return -1;
	w->mem[w->n_mem++] = (struct amdgpu_sim_mem){ addr, p, len };
	return 0;
}

int sim_fail(struct sim_ctx *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return cause_set(c->cause, "%s: %s", c->text, msg);
}

/* --- operands ----------------------------------------------------------- */

static int sim_hwreg_id(const char *name)
{
	static const struct {
		const char *name;
		int id;
	} ids[] = { { "HW_REG_HW_ID", 4 }, { "HW_REG_HW_ID1", 23 }, { "HW_REG_XCC_ID", 20 },
		    { "HW_REG_SHADER_CYCLES", 29 }, { "HW_REG_SHADER_CYCLES_LO", 29 },
		    { "HW_REG_SHADER_CYCLES_HI", 30 } };
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
		if (!strcmp(name, ids[i].name))
			return ids[i].id;
	return (int)strtol(name, NULL, 0);
}

/* "hwreg(NAME[, off, size])" */
static int sim_hwreg(const char *s, struct sim_op *o)
{
	char name[40] = "";
	int off = 0, size = 32;
	int got = sscanf(s, "hwreg(%39[^,)], %d, %d)", name, &off, &size);
	if (got < 1)
		return -1;
	o->kind = SO_HWREG;
	snprintf(o->name, sizeof o->name, "%s", name);
	o->imm = sim_hwreg_id(name);
	o->hw_off = got == 3 ? off : 0;
	o->hw_size = got == 3 ? size : 32;
	return 0;
}

static int sim_operand(const char *s, struct sim_op *o)
{
	struct amdgpu_reg r;
	memset(o, 0, sizeof *o);
	if (!strcmp(s, "null")) {
		o->kind = SO_NULL;
		snprintf(o->name, sizeof o->name, "null");
		return 0;
	}
	if (!strcmp(s, "off")) {
		o->kind = SO_OFF;
		return 0;
	}
	if (!strncmp(s, "hwreg(", 6))
		return sim_hwreg(s, o);
	if (!strncmp(s, "sendmsg(", 8)) {
		o->kind = SO_MSG;
		snprintf(o->name, sizeof o->name, "%s", s + 8);
		return 0;
	}
	if (amdgpu_code_reg(s, &r) == 0) {
		static const enum sim_kind kinds[][2] = { { 's', SO_SGPR }, { 't', SO_TTMP }, { 'e', SO_EXEC },
							  { 'c', SO_VCC },  { 'm', SO_M0 },   { 'v', SO_VGPR } };
		for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
			if (r.file == (char)kinds[i][0]) {
				o->kind = kinds[i][1];
				o->reg = r.first;
				o->count = r.count;
				return 0;
			}
		return -1;
	}
	char *end;
	long long v = strtoll(s, &end, 0);
	if (end == s || *end)
		return -1;
	o->kind = SO_IMM;
	o->imm = v;
	return 0;
}

/* An instruction line of objdump's (labels resolved already absent). */
static int sim_decode(struct sim_ctx *c, struct sim_insn *in)
{
	char buf[512], *mn, *ops[SIM_OPS + 2];
	int n = amdgpu_code_split(c->text, buf, sizeof buf, &mn, ops, SIM_OPS + 2);
	memset(in, 0, sizeof *in);
	snprintf(in->mn, sizeof in->mn, "%s", mn);
	size_t l = strlen(in->mn);
	if (l > 4 && (!strcmp(in->mn + l - 4, "_e32") || !strcmp(in->mn + l - 4, "_e64")))
		in->mn[l - 4] = 0;
	for (int i = 0; i < n; i++) {
		if (!strncmp(ops[i], "offset:", 7)) {
			in->offset = (int32_t)strtol(ops[i] + 7, NULL, 0);
			continue;
		}
		if (strchr(ops[i], ':') && strncmp(ops[i], "hwreg", 5) && !strchr(ops[i], '['))
			continue; /* other modifiers (th:, scope:) */
		if (in->n == SIM_OPS)
			return sim_fail(c, "too many operands");
		struct sim_op *o = &in->op[in->n++];
		if (sim_operand(ops[i], o) < 0) { /* fails only if an instruction reads it */
			memset(o, 0, sizeof *o);
			snprintf(o->name, sizeof o->name, "%s", ops[i]);
		}
	}
	return 0;
}

int sim_sread(struct sim_ctx *c, const struct sim_op *o, uint64_t *v)
{
	struct amdgpu_wave *w = c->w;
	switch (o->kind) {
	case SO_SGPR:
		if (o->reg + o->count > AMDGPU_SIM_SGPRS)
			return sim_fail(c, "s%d out of range", o->reg);
		*v = w->s[o->reg] | (o->count > 1 ? (uint64_t)w->s[o->reg + 1] << 32 : 0);
		return 0;
	case SO_TTMP:
		if (o->reg + o->count > 16)
			return sim_fail(c, "ttmp%d out of range", o->reg);
		*v = w->ttmp[o->reg] | (o->count > 1 ? (uint64_t)w->ttmp[o->reg + 1] << 32 : 0);
		return 0;
	case SO_EXEC:
		*v = o->count == 2 ? w->exec : o->reg ? w->exec >> 32 : (uint32_t)w->exec;
		return 0;
	case SO_VCC:
		*v = o->count == 2 ? w->vcc : o->reg ? w->vcc >> 32 : (uint32_t)w->vcc;
		return 0;
	case SO_M0:
		*v = w->m0;
		return 0;
	case SO_IMM:
		*v = (uint64_t)o->imm;
		return 0;
	default:
		return sim_fail(c, "operand '%s' is not a scalar value the model reads", o->name);
	}
}

int sim_swrite(struct sim_ctx *c, const struct sim_op *o, uint64_t v)
{
	struct amdgpu_wave *w = c->w;
	switch (o->kind) {
	case SO_SGPR:
		if (o->reg + o->count > AMDGPU_SIM_SGPRS)
			return sim_fail(c, "s%d out of range", o->reg);
		w->s[o->reg] = (uint32_t)v;
		if (o->count > 1)
			w->s[o->reg + 1] = (uint32_t)(v >> 32);
		return 0;
	case SO_EXEC:
		if (o->count == 2)
			w->exec = v;
		else if (o->reg)
			w->exec = (w->exec & 0xffffffffu) | v << 32;
		else
			w->exec = (w->exec & ~0xffffffffull) | (uint32_t)v;
		if (w->lanes == 32)
			w->exec &= 0xffffffffu;
		return 0;
	case SO_VCC:
		w->vcc = o->count == 2 ? v : (w->vcc & ~0xffffffffull) | (uint32_t)v;
		return 0;
	case SO_NULL:
		return 0;
	default:
		return sim_fail(c, "not a scalar destination");
	}
}

int sim_vread(struct sim_ctx *c, const struct sim_op *o, int lane, uint64_t *v)
{
	if (o->kind != SO_VGPR)
		return sim_sread(c, o, v);
	if (o->reg + o->count > AMDGPU_SIM_VGPRS)
		return sim_fail(c, "v%d out of range", o->reg);
	*v = c->w->v[o->reg][lane] | (o->count > 1 ? (uint64_t)c->w->v[o->reg + 1][lane] << 32 : 0);
	return 0;
}

int sim_vwrite(struct sim_ctx *c, const struct sim_op *o, int lane, uint64_t v)
{
	if (o->kind != SO_VGPR || o->reg + o->count > AMDGPU_SIM_VGPRS)
		return sim_fail(c, "not a VGPR destination in range");
	c->w->v[o->reg][lane] = (uint32_t)v;
	if (o->count > 1)
		c->w->v[o->reg + 1][lane] = (uint32_t)(v >> 32);
	return 0;
}

/* --- memory ----------------------------------------------------------- */

static uint8_t *sim_mem(struct sim_ctx *c, uint64_t addr, size_t n)
{
	for (int i = 0; i < c->w->n_mem; i++) {
		const struct amdgpu_sim_mem *m = &c->w->mem[i];
		if (addr >= m->addr && addr - m->addr <= m->len && n <= m->len - (addr - m->addr))
			return m->p + (addr - m->addr);
	}
	return NULL;
}

int sim_load(struct sim_ctx *c, uint64_t addr, void *out, size_t n)
{
	uint8_t *p = sim_mem(c, addr, n);
	if (!p)
		return sim_fail(c, "reads %zu bytes at 0x%llx, outside every mapped range", n, (unsigned long long)addr);
	memcpy(out, p, n);
	return 0;
}

int sim_store(struct sim_ctx *c, uint64_t addr, const void *in, size_t n)
{
	uint8_t *p = sim_mem(c, addr, n);
	if (!p)
		return sim_fail(c, "writes %zu bytes at 0x%llx, outside every mapped range", n, (unsigned long long)addr);
	memcpy(p, in, n);
	return 0;
}

/* --- running ---------------------------------------------------------- */

int amdgpu_sim_step(struct amdgpu_wave *w, const char *text, char **cause)
{
	struct sim_ctx c = { .w = w, .text = text, .cause = cause };
	struct sim_insn in;
	if (sim_decode(&c, &in) < 0 || sim_exec(&c, &in) < 0)
		return -1;
	w->executed++;
	w->clock++;
	w->realtime++;
	if (w->trace)
		w->trace(w, text);
	return 0;
}

int amdgpu_sim_run(struct amdgpu_wave *w, const struct amdgpu_func *g, int from, int to, char **cause)
{
	for (int i = from; i < to && i < g->n; i++)
		if (amdgpu_sim_step(w, g->v[i].text, cause) < 0)
			return -1;
	return 0;
}
