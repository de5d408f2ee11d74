/* What the AMDGPU path needs to know about instructions, per ISA family:
 * the spelling of the few instructions the engine emits (gfx9/gfx10 name
 * scalar loads s_load_dwordx2 and stores global_store_dword, gfx11/gfx12
 * s_load_b64 and global_store_b32; gfx12 waits for scalar memory with
 * s_wait_kmcnt; wave32 masks are one SGPR, wave64 masks a pair), and how
 * to read an instruction of the kernel from its disassembly: is it a
 * vector memory access (global_, flat_, buffer_, scratch_), of which kind,
 * how many bytes, through which address operands; is it the end of the
 * program. Families probed: gfx9 (gfx900-gfx90c), gfx90a, gfx94
 * (gfx940-gfx942), gfx10.3, gfx11, gfx12; others are refused by name. */
#ifndef NTOP_AMDGPU_ISA_H
#define NTOP_AMDGPU_ISA_H
#include <stdint.h>

#include "engine/amdgpu/amdgpu_target.h"

struct amdgpu_isa {
	enum amdgpu_family family;
	int wave64;
	const char *sload2, *sload4;   /* scalar loads of 2 and 4 dwords */
	const char *gstore1, *gstore2; /* global stores of 1 and 2 dwords (saddr + 32-bit voffset form) */
	const char *wait_smem;         /* waits for every outstanding scalar memory access */
	const char *vadd;              /* v_add_u32 (gfx9, no carry) / v_add_nc_u32 */
	const char *exec;              /* "exec" / "exec_lo" */
	const char *mov_mask, *cselect_mask, *and_saveexec; /* _b64 / _b32 by wave size */
	int mask_sgprs;                /* SGPRs of a lane mask: 2 (wave64) or 1 */
	int vop3_literal;              /* VOP3 takes a 32-bit literal (gfx10+) */
	int vop3_null_sdst;            /* a VOP3 carry-out may be `null` (gfx10+) */
	int store_offset_max;          /* largest immediate offset of a global store */
};

/* 0, or -1 naming why the family cannot be probed. */
int amdgpu_isa_init(struct amdgpu_isa *isa, enum amdgpu_family f, int wave32, char **cause);

enum amdgpu_mem_kind {
	AMDGPU_MEM_NONE,
	AMDGPU_MEM_LOAD = 1,
	AMDGPU_MEM_STORE = 2,
	AMDGPU_MEM_ATOMIC = 3,
};

/* A vector memory instruction as its text reads. */
struct amdgpu_mem {
	enum amdgpu_mem_kind kind;
	char space[8];        /* "global", "flat", "buffer", "scratch" */
	uint32_t bytes;       /* per lane; 0 when the mnemonic does not say */
	/* address: vaddr64 (a VGPR pair, saddr "off"), or saddr (an SGPR
	 * pair) plus the 32-bit vaddr VGPR, plus the signed immediate */
	int vaddr, vaddr_pair;  /* first VGPR, and whether it is a pair (-1: none) */
	int saddr;              /* first SGPR of the pair, -1: "off" */
	int32_t offset;
	int has_addr;           /* the address is computable (global, flat, raw buffer) */
	/* buffer_ (MUBUF): the V# (4 SGPRs from srsrc), vaddr the 32-bit
	 * offset VGPR (offen, else -1); the address is base + vaddr + offset,
	 * in range while vaddr + offset + bytes <= num_records */
	int srsrc;              /* first SGPR of the V#, -1: not a buffer access */
	const char *why;        /* no address: why (buffer forms not handled) */
};

/* Classifies instruction text such as "global_load_dwordx2 v[2:3], v[0:1],
 * off offset:16": 0 and *m filled for a vector memory access, else -1. */
int amdgpu_isa_mem(const char *text, struct amdgpu_mem *m);
/* Does a mnemonic (first word of text) match the prefix pattern `pat`
 * ("global_load" matches "global_load_dwordx4"; parts end at '_')? A
 * pattern ending in '$' matches the whole mnemonic only ("s_barrier$"). */
int amdgpu_isa_match(const char *text, const char *pat);
/* The last instruction of a program (s_endpgm), and on gfx11+ the start
 * of its epilogue "s_nop 0; s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)" that
 * must stay adjacent to it. */
int amdgpu_isa_is_endpgm(const char *text);
int amdgpu_isa_is_dealloc(const char *text);
/* Does a scalar instruction leave SCC as it was (s_mov, s_cselect,
 * s_getreg, scalar memory, waits, s_nop...)? Anything else scalar may
 * write it. */
int amdgpu_isa_keeps_scc(const char *text);

#endif
