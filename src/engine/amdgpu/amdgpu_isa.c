/* Instruction spellings per family and the reading of memory instructions
 * from llvm-objdump 19's text (see amdgpu_isa.h). Operand orders (LLVM's
 * AMDGPU syntax):
 *   global/flat load     vdst, vaddr[, saddr]
 *   global/flat store    vaddr, vdata[, saddr]
 *   atomic, no return    vaddr, vdata[, saddr]
 *   atomic, returning    vdst, vaddr, vdata[, saddr]
 * then modifiers separated by spaces (offset:N, glc, sc0, th:..., ...). */
#include "engine/amdgpu/amdgpu_isa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

int amdgpu_isa_init(struct amdgpu_isa *isa, enum amdgpu_family f, int wave32, char **cause)
{
	memset(isa, 0, sizeof *isa);
	isa->family = f;
	int gfx9 = f == AMDGPU_FAMILY_GFX9 || f == AMDGPU_FAMILY_GFX90A || f == AMDGPU_FAMILY_GFX94;
	if (!gfx9 && f != AMDGPU_FAMILY_GFX10_3 && f != AMDGPU_FAMILY_GFX11 && f != AMDGPU_FAMILY_GFX12)
		return cause_set(cause, "%s code is not probed: the GCN dialect covers gfx9 (with gfx90a and gfx94), "
				 "gfx10.3, gfx11 and gfx12", amdgpu_family_name(f));
	isa->wave64 = gfx9 || !wave32;
	int b = f >= AMDGPU_FAMILY_GFX11; /* gfx11 renamed memory instructions by bit width */
	isa->sload2 = b ? "s_load_b64" : "s_load_dwordx2";
	isa->sload4 = b ? "s_load_b128" : "s_load_dwordx4";
	isa->gstore1 = b ? "global_store_b32" : "global_store_dword";
	isa->gstore2 = b ? "global_store_b64" : "global_store_dwordx2";
	isa->wait_smem = f == AMDGPU_FAMILY_GFX12 ? "s_wait_kmcnt 0x0" : "s_waitcnt lgkmcnt(0)";
	isa->vadd = gfx9 ? "v_add_u32" : "v_add_nc_u32";
	isa->exec = isa->wave64 ? "exec" : "exec_lo";
	isa->mov_mask = isa->wave64 ? "s_mov_b64" : "s_mov_b32";
	isa->cselect_mask = isa->wave64 ? "s_cselect_b64" : "s_cselect_b32";
	isa->and_saveexec = isa->wave64 ? "s_and_saveexec_b64" : "s_and_saveexec_b32";
	isa->mask_sgprs = isa->wave64 ? 2 : 1;
	isa->vop3_literal = !gfx9;
	isa->vop3_null_sdst = !gfx9;
	/* signed immediate offsets: 13 bits on gfx9 and gfx11, 12 on gfx10, 24 on gfx12 */
	isa->store_offset_max = f == AMDGPU_FAMILY_GFX10_3 ? 2047 : f == AMDGPU_FAMILY_GFX12 ? 8388607 : 4095;
	return 0;
}

int amdgpu_isa_match(const char *text, const char *pat)
{
	size_t n = strlen(pat);
	/* "s_barrier$": that mnemonic alone, not gfx12's s_barrier_wait */
	int whole = n > 0 && pat[n - 1] == '$';
	n -= (size_t)whole;
	return strncmp(text, pat, n) == 0 && (text[n] == 0 || text[n] == ' ' || (!whole && text[n] == '_'));
}

/* Bytes per lane from the mnemonic's size words. */
static uint32_t isa_bytes(const char *mn, enum amdgpu_mem_kind kind)
{
	static const struct {
		const char *word;
		uint32_t bytes;
	} words[] = {
		{ "dwordx4", 16 }, { "dwordx3", 12 }, { "dwordx2", 8 }, { "dword", 4 }, { "ubyte", 1 }, { "sbyte", 1 },
		{ "byte", 1 }, { "ushort", 2 }, { "sshort", 2 }, { "short", 2 }, { "b128", 16 }, { "b96", 12 },
		{ "b64", 8 }, { "b32", 4 }, { "b16", 2 }, { "b8", 1 }, { "u8", 1 }, { "i8", 1 }, { "u16", 2 },
		{ "i16", 2 }, { "f16", 2 }, { "bf16", 2 }, { "u32", 4 }, { "i32", 4 }, { "f32", 4 }, { "u64", 8 },
		{ "i64", 8 }, { "f64", 8 }, { "x2", 8 },
	};
	uint32_t got = 0;
	for (const char *p = strchr(mn, '_'); p; p = strchr(p + 1, '_')) {
		size_t len = strcspn(p + 1, "_");
		for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
			if (strlen(words[i].word) == len && strncmp(p + 1, words[i].word, len) == 0)
				got = got > words[i].bytes ? got : words[i].bytes;
	}
	if (strstr(mn, "_pk_")) /* packed pairs of 16-bit values */
		got = 4;
	if (!got && kind == AMDGPU_MEM_ATOMIC)
		got = 4; /* gfx9 names 32-bit atomics without a size: global_atomic_add */
	return got;
}

/* "v5" -> 5, "v[4:5]" -> 4 (pair set when two registers); -1 otherwise. */
static int isa_reg(const char *op, char file, int *pair)
{
	char *end;
	if (op[0] != file)
		return -1;
	if (op[1] == '[') {
		long lo = strtol(op + 2, &end, 10);
		long hi = *end == ':' ? strtol(end + 1, &end, 10) : -1;
		if (*end != ']' || lo < 0 || hi < lo)
			return -1;
		if (pair)
			*pair = hi == lo + 1;
		return (int)lo;
	}
	long v = strtol(op + 1, &end, 10);
	if (end == op + 1 || (*end && *end != ' '))
		return -1;
	if (pair)
		*pair = 0;
	return (int)v;
}

/* Splits the operands at commas; the last one keeps its modifiers. */
static int isa_operands(char *ops, char **out, int max)
{
	int n = 0;
	for (char *p = ops; p && n < max;) {
		while (*p == ' ')
			p++;
		out[n++] = p;
		p = strchr(p, ',');
		if (p)
			*p++ = 0;
	}
	return n;
}

/* Is `word` one of the space-separated modifiers? */
static int isa_has_mod(const char *mods, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = mods; (p = strstr(p, word)) != NULL; p += n)
		if ((p == mods || p[-1] == ' ') && (p[n] == 0 || p[n] == ' '))
			return 1;
	return 0;
}

/* Strips the modifiers off the last operand into mods (offset:N read). */
static void isa_modifiers(char *last, struct amdgpu_mem *m, char *mods, size_t size)
{
	char *sp = strchr(last, ' ');
	mods[0] = 0;
	if (!sp)
		return;
	*sp = 0;
	snprintf(mods, size, "%s", sp + 1);
	const char *off = strstr(sp + 1, "offset:");
	if (off)
		m->offset = (int32_t)strtol(off + 7, NULL, 0);
}

static enum amdgpu_mem_kind isa_kind(const char *mn, const char *space)
{
	const char *op = mn + strlen(space) + 1;
	if (amdgpu_isa_match(op, "load"))
		return AMDGPU_MEM_LOAD;
	if (amdgpu_isa_match(op, "store"))
		return AMDGPU_MEM_STORE;
	if (amdgpu_isa_match(op, "atomic"))
		return AMDGPU_MEM_ATOMIC;
	return AMDGPU_MEM_NONE; /* global_inv, buffer_wbinvl1, ... */
}

/* Address operands: vaddr is operand 1 of loads and returning atomics
 * (3 registers before saddr), else operand 0. */
static void isa_address(struct amdgpu_mem *m, char **op, int n)
{
	int flat = strcmp(m->space, "flat") == 0;
	int regs = flat ? n : n - 1; /* without saddr */
	int va = m->kind == AMDGPU_MEM_LOAD || (m->kind == AMDGPU_MEM_ATOMIC && regs == 3) ? 1 : 0;
	m->saddr = -1;
	m->vaddr = va < regs ? isa_reg(op[va], 'v', &m->vaddr_pair) : -1;
	if (!flat && n >= 2)
		m->saddr = strcmp(op[n - 1], "off") == 0 ? -1 : isa_reg(op[n - 1], 's', NULL);
	int saddr_ok = flat || strcmp(op[n - 1], "off") == 0 || m->saddr >= 0;
	m->has_addr = m->vaddr >= 0 && saddr_ok && (m->saddr >= 0 ? !m->vaddr_pair : m->vaddr_pair);
}

/* MUBUF: vdata, vaddr|off, srsrc, soffset [offen] [idxen] [offset:N]...
 * Raw accesses (no idxen) with a zero soffset get an address; the other
 * forms are named in m->why. Whether the V# is a plain raw buffer and the
 * lane in range is for the inserted code to test (amdgpu_emit.c). */
static void isa_buffer(struct amdgpu_mem *m, const char *mn, char **op, int n, const char *mods)
{
	int offen = isa_has_mod(mods, "offen");
	m->srsrc = n >= 4 ? isa_reg(op[2], 's', NULL) : -1;
	if (strstr(mn, "_format") || strstr(mn, "_lds") || isa_has_mod(mods, "lds"))
		m->why = "a buffer format conversion or an LDS transfer";
	else if (isa_has_mod(mods, "idxen") || isa_has_mod(mods, "addr64"))
		m->why = "a structured buffer access (idxen): its range check by index is not modelled";
	else if (n < 4 || m->srsrc < 0 || (offen ? isa_reg(op[1], 'v', NULL) < 0 : strcmp(op[1], "off") != 0))
		m->why = "a buffer access whose operands are not read";
	else if (strcmp(op[3], "0") && strcmp(op[3], "off") && strcmp(op[3], "null"))
		m->why = "a buffer access with an soffset: whether the range check counts it is not modelled";
	else if (!m->bytes)
		m->why = "a buffer access of unknown size";
	if (m->why)
		return;
	m->vaddr = offen ? isa_reg(op[1], 'v', NULL) : -1;
	m->has_addr = 1;
}

int amdgpu_isa_mem(const char *text, struct amdgpu_mem *m)
{
	static const char *const spaces[] = { "global", "flat", "buffer", "scratch", NULL };
	memset(m, 0, sizeof *m);
	m->vaddr = m->saddr = m->srsrc = -1;
	const char *const *sp = spaces;
	while (*sp && !amdgpu_isa_match(text, *sp))
		sp++;
	if (!*sp)
		return -1;
	size_t mlen = strcspn(text, " ");
	char mn[64], ops[256];
	if (mlen >= sizeof mn)
		return -1;
	memcpy(mn, text, mlen);
	mn[mlen] = 0;
	m->kind = isa_kind(mn, *sp);
	if (m->kind == AMDGPU_MEM_NONE)
		return -1;
	snprintf(m->space, sizeof m->space, "%s", *sp);
	m->bytes = isa_bytes(mn, m->kind);
	snprintf(ops, sizeof ops, "%s", text[mlen] ? text + mlen + 1 : "");
	char *op[8], mods[128];
	int n = isa_operands(ops, op, 8);
	if (n > 0)
		isa_modifiers(op[n - 1], m, mods, sizeof mods);
	if ((!strcmp(*sp, "global") || !strcmp(*sp, "flat")) && n >= 2 && !strstr(mn, "addtid"))
		isa_address(m, op, n);
	else if (!strcmp(*sp, "buffer"))
		isa_buffer(m, mn, op, n, mods);
	return 0;
}

int amdgpu_isa_is_endpgm(const char *text)
{
	return amdgpu_isa_match(text, "s_endpgm") && strncmp(text, "s_endpgm_", 9) != 0;
}

int amdgpu_isa_is_dealloc(const char *text)
{
	return strncmp(text, "s_sendmsg ", 10) == 0 && strstr(text, "MSG_DEALLOC_VGPRS");
}

int amdgpu_isa_keeps_scc(const char *text)
{
	static const char *const keep[] = { "s_mov", "s_movk", "s_cmov", "s_cselect", "s_getreg", "s_load",
					    "s_buffer_load", "s_memtime", "s_memrealtime", "s_sendmsg", "s_waitcnt",
					    "s_wait", "s_nop", "s_mul_i32", "s_mul_hi", "s_bfm", "s_getpc", "s_pack",
					    "s_delay_alu", "s_sext", "s_brev", NULL };
	if (text[0] != 's' || text[1] != '_')
		return 1; /* vector and memory instructions never write SCC */
	for (const char *const *k = keep; *k; k++)
		if (amdgpu_isa_match(text, *k))
			return 1;
	return 0;
}
