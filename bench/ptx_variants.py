#!/usr/bin/env python3
"""Variants of block_sched's probed PTX, to see what in the probe costs what
inside the kernel (doc/performance.md, "block_sched inside the kernel, by record layout").

examples/cuda/app_cost.cu's fill, copy and reduce kernels are compiled to PTX
(nvcc -ptx) and probed by `ntop instrument -p block_sched --1d` (the copy
the hook launches for these 1-D launches); each variant is that probed PTX
edited as text:

  orig      the kernel as nvcc wrote it
  emitted   block_sched as ntop emits it for 1-D launches
  general   block_sched as ntop emits it for any launch shape (y and z
            indices read: what every launch got before the 1-D copy)
  blockmap  tests/gpu/block_span.toml (a block map: every warp folds its
            start and end in) as ntop emits it for 1-D launches
  onestore  only the record's last 8 bytes stored (one store)
  lanes     the 24-byte record from 3 lanes in one store
  nosmid    the SM id not read (0 stored)
  entry16   the record's first 16 bytes stored at entry
  nostore   nothing stored at the exit (ptxas then drops the clock reads and
            the address arithmetic too: this is the original kernel's SASS)
  nomem     every instruction of emitted, the record's stores predicated on
            a global timer of 0 (never true, which ptxas cannot know): the
            probe's reads and arithmetic without its memory traffic
  noglobal  emitted with the SM clock read in place of the global timer
  noclock   emitted without the exit's SM clock read (elapsed stored as 0)
  noread    nomem without the exit's clock and SM id reads: the entry's
            reads and arithmetic alone
  idx1d     emitted with the record's address from x alone (tid.x, ntid.x,
            ctaid.x: right for 1D launches only) and no count area
  idx1dm    idx1d with the stores predicated off, as nomem
  nomemp    nomem with the stores predicated on the map's address being 1
            (so the entry's clock reads can go: next)
  nomemclk  nomemp without the entry's clock and global timer reads (0)
  lateclk   emitted with the entry's two clock reads moved after the
            kernel's first global load (fill, which loads nothing: as is)
  block     one record per block: thread 0 keeps its entry clocks in shared
            memory after a barrier, the block's last thread out (a
            shared-memory atomic per warp) stores 24 bytes
  w0        one record per block from thread 0 alone (its own clocks, no
            barrier): 24 bytes per block instead of per warp
  pack8     8 bytes per warp in one store, records packed 8 bytes apart
  pack16    16 bytes per warp in one vector store, packed 16 bytes apart
  pad32     the 24-byte record in two vector stores, 32 bytes apart (one
            whole sector per warp, 8 bytes of it never written)
  full32    32 bytes per warp in two vector stores (whole sectors)
  samesm    8 bytes per warp in one store, every warp of an SM to the same
            address (a store that reaches no DRAM)
  v4        16 bytes per warp in one vector store: the low 32 bits of the
            SM clock and global timer at entry, elapsed cycles and the SM
  v4base    v4, and thread 0 of each block also stores the block's 64-bit
            base (its own SM clock and global timer at entry, 16 bytes)
            after the warp records: each warp's low 32 bits then give its
            full clocks exactly (a block's warps start within microseconds
            of its thread 0, far inside 2^31 cycles or ns)
  blkred    one 32-byte record per block: each warp's lane 0 folds its exit
            clock into the block's end (red.global.max), thread 0 also
            stores its entry clocks and the SM
  blkred2   blkred, each warp also folding its entry clock into the block's
            start (red.global.max of its complement)
  blkred2e  a 40-byte block record: each warp's lane 0 folds its entry
            clock's complement in at entry (the block's first start) and
            its exit clock at exit (red.global.max); thread 0 also stores
            its own entry clocks and the SM
  l2wb      emitted with plain record stores (no .cs: what ntop emitted
            before 2026-11-28)
  l2hint    emitted with the record's stores kept in L2 over the kernel's
            own data (createpolicy.fractional.L2::evict_last, stores with
            .L2::cache_hint; st.global.L2::evict_last itself needs 32-byte
            stores on sm_90)
  p8w0      8 bytes per warp (low 32 bits of the entry clock, elapsed) in
            one store, thread 0 also storing a 32-byte block header

  ptx_variants.py make --ntop NTOP --out DIR     writes DIR/<kernel>.<variant>.ptx
  ptx_variants.py selftest --ntop NTOP           every variant assembles (ptxas
                                                 sm_90) and is what it says
bench/ptx_variants.sh times them on a GPU with bench/ptx_time.c.
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = {"fill": "_Z6k_fillPiii", "copy": "_Z6k_copyPKfPfi", "reduce": "_Z8k_reducePKfPyi"}
VARIANTS = ("orig", "emitted", "general", "onestore", "lanes", "nosmid", "entry16", "nostore", "nomem", "noglobal",
            "noclock", "noread", "idx1d", "idx1dm", "nomemp", "nomemclk", "lateclk",
            "block", "w0", "pack8", "pack16", "pad32", "full32", "samesm", "v4", "v4base", "blkred", "blkred2",
            "p8w0", "blockmap", "blkred2e", "l2hint", "l2wb")

LANES = """{
\t.reg .b32 %vl, %ve, %vs; .reg .pred %vp, %vq1, %vq2; .reg .b64 %vv, %va, %vc;
\tmov.u64 %vc, %clock64;
\tsub.u64 %vc, %vc, %ntop_p0_bs_start;
\tcvt.u32.u64 %ve, %vc;
\tmov.u32 %vs, %smid;
\tmov.u32 %vl, %laneid;
\tsetp.lt.u32 %vp, %vl, 3;
\t@!%vp bra $ntop_lane_0;
\tmov.b64 %vv, {%ve, %vs};
\tsetp.eq.u32 %vq1, %vl, 1;
\tsetp.eq.u32 %vq2, %vl, 0;
\t@%vq1 mov.b64 %vv, %ntop_p0_bs_gstart;
\t@%vq2 mov.b64 %vv, %ntop_p0_bs_start;
\tmad.wide.u32 %va, %vl, 8, %ntop_hr0;
\tst.global.cs.b64 [%va], %vv;
\t}"""

BLOCK_ENTRY = """\t.reg .b64 %bk_start, %bk_gstart, %bk_c, %bk_a, %bk_b, %bk_nb;
\t.reg .b32 %bk_tl, %bk_w<8>, %bk_el, %bk_sm, %bk_nt;
\t.reg .pred %bk_p, %bk_q;
\t.shared .align 16 .b8 ntop_blk[32];
\tmov.u64 %bk_start, %clock64;
\tmov.u64 %bk_gstart, %globaltimer;
\tmov.u32 %bk_w0, %tid.x;
\tmov.u32 %bk_w1, %tid.y;
\tmov.u32 %bk_w2, %tid.z;
\tmov.u32 %bk_w3, %ntid.x;
\tmov.u32 %bk_w4, %ntid.y;
\tmov.u32 %bk_w5, %ntid.z;
\tmad.lo.u32 %bk_tl, %bk_w2, %bk_w4, %bk_w1;
\tmad.lo.u32 %bk_tl, %bk_tl, %bk_w3, %bk_w0;
\tmul.lo.u32 %bk_nt, %bk_w3, %bk_w4;
\tmul.lo.u32 %bk_nt, %bk_nt, %bk_w5;
\tsetp.eq.u32 %bk_p, %bk_tl, 0;
\t@%bk_p st.shared.u32 [ntop_blk], 0;
\t@%bk_p st.shared.v2.u64 [ntop_blk+16], {%bk_start, %bk_gstart};
\tbar.sync 0;
"""

# Before the kernel's ret: each exiting group's first lane adds the group's
# threads to the block's count; the thread that completes it stores the
# block's count (24) and record {start, gstart, elapsed, smid} at block_linear.
BLOCK_EXIT = """\tactivemask.b32 %bk_w1;
\tpopc.b32 %bk_w2, %bk_w1;
\tmov.u32 %bk_w3, %lanemask_lt;
\tand.b32 %bk_w3, %bk_w3, %bk_w1;
\tsetp.ne.u32 %bk_q, %bk_w3, 0;
\t@%bk_q bra $bk_done;
\tatom.shared.add.u32 %bk_w4, [ntop_blk], %bk_w2;
\tadd.u32 %bk_w4, %bk_w4, %bk_w2;
\tsetp.ne.u32 %bk_q, %bk_w4, %bk_nt;
\t@%bk_q bra $bk_done;
\tld.shared.v2.u64 {%bk_start, %bk_gstart}, [ntop_blk+16];
\tmov.u64 %bk_c, %clock64;
\tsub.u64 %bk_c, %bk_c, %bk_start;
\tcvt.u32.u64 %bk_el, %bk_c;
\tmov.u32 %bk_sm, %smid;
\tmov.u32 %bk_w0, %ctaid.x;
\tmov.u32 %bk_w1, %ctaid.y;
\tmov.u32 %bk_w2, %ctaid.z;
\tmov.u32 %bk_w3, %nctaid.x;
\tmov.u32 %bk_w4, %nctaid.y;
\tmov.u32 %bk_w5, %nctaid.z;
\tmad.lo.u32 %bk_w1, %bk_w2, %bk_w4, %bk_w1;
\tmul.lo.u32 %bk_w4, %bk_w4, %bk_w5;
\tcvt.u64.u32 %bk_a, %bk_w1;
\tcvt.u64.u32 %bk_b, %bk_w3;
\tcvt.u64.u32 %bk_c, %bk_w0;
\tmad.lo.u64 %bk_a, %bk_a, %bk_b, %bk_c;
\tcvt.u64.u32 %bk_c, %bk_w4;
\tmul.lo.u64 %bk_nb, %bk_c, %bk_b;
\tld.param.u64 %bk_c, [ntop_map0];
\tcvta.to.global.u64 %bk_c, %bk_c;
\tmad.lo.u64 %bk_b, %bk_a, 4, %bk_c;
\tst.global.cs.u32 [%bk_b], 24;
\tshl.b64 %bk_nb, %bk_nb, 2;
\tadd.u64 %bk_nb, %bk_nb, 15;
\tand.b64 %bk_nb, %bk_nb, -16;
\tadd.u64 %bk_c, %bk_c, %bk_nb;
\tmad.lo.u64 %bk_c, %bk_a, 24, %bk_c;
\tst.global.cs.b64 [%bk_c], %bk_start;
\tst.global.cs.b64 [%bk_c+8], %bk_gstart;
\tst.global.cs.v2.b32 [%bk_c+16], {%bk_el, %bk_sm};
$bk_done:
"""

RECORD_STORES = ("st.global.cs.b64 [%ntop_sa],", "st.global.cs.b64 [%ntop_sa+8],", "st.global.cs.v2.b32 [%ntop_sa+16],")


class VariantError(Exception):
    pass


def find(lines, text, what):
    for i, line in enumerate(lines):
        if text in line:
            return i
    raise VariantError(f"{what}: no line with {text!r} (has ntop's emitted form changed?)")


def drop(lines, texts):
    return [line for line in lines if not any(t in line for t in texts)]


# The unit's record address for 1D launches: (ctaid.x * warps per block +
# tid.x / 32) * 24 from the map's start.
IDX1D = """\tmov.u32 %ntop_tl, %tid.x;
\tmov.u32 %ntop_w3, %ntid.x;
\tadd.u32 %ntop_pw, %ntop_w3, 31;
\tshr.u32 %ntop_pw, %ntop_pw, 5;
\tshr.u32 %ntop_uw, %ntop_tl, 5;
\tmov.u32 %ntop_w5, %ctaid.x;
\tmad.lo.u32 %ntop_w1, %ntop_w5, %ntop_pw, %ntop_uw;
\tld.param.u64 %ntop_d2, [ntop_map0];
\tcvta.to.global.u64 %ntop_d2, %ntop_d2;
\tmad.wide.u32 %ntop_hr0, %ntop_w1, 24, %ntop_d2;
"""
RECORD_STRIDE = ("mad.lo.u64 %ntop_d0, %ntop_d0, 24, %ntop_d2;", "mad.wide.u32 %ntop_hr0, %ntop_uw, 24, %ntop_d0;")
# What the packed variants store in place of RECORD_STORES (after the
# record's values are in %ntop_x0 / %ntop_v0-1).
PACKED = {
    "pack8": (8, ["\tst.global.cs.v2.b32 [%ntop_sa], {%ntop_v0, %ntop_v1};"]),
    "pack16": (16, ["\tmov.b64 %ntop_x1, {%ntop_v0, %ntop_v1};",
                    "\tst.global.cs.v2.b64 [%ntop_sa], {%ntop_p0_bs_start, %ntop_x1};"]),
    "pad32": (32, ["\tst.global.cs.v2.b64 [%ntop_sa], {%ntop_p0_bs_start, %ntop_p0_bs_gstart};",
                   "\tst.global.cs.v2.b32 [%ntop_sa+16], {%ntop_v0, %ntop_v1};"]),
    "full32": (32, ["\tst.global.cs.v2.b64 [%ntop_sa], {%ntop_p0_bs_start, %ntop_p0_bs_gstart};",
                    "\tst.global.cs.v4.b32 [%ntop_sa+16], {%ntop_v0, %ntop_v1, %ntop_v0, %ntop_v1};"]),
}

# Layouts that keep exact block extents with fewer bytes or stores per warp:
# what they store in place of RECORD_STORES (end clock = start + cycles).
BLOCKWISE = {
    "v4": (16, ["\t{ .reg .b32 %vsl, %vgl;", "\tcvt.u32.u64 %vsl, %ntop_p0_bs_start;",
                "\tcvt.u32.u64 %vgl, %ntop_p0_bs_gstart;",
                "\tst.global.cs.v4.b32 [%ntop_sa], {%vsl, %ntop_v0, %ntop_v1, %vgl}; }"]),
    "v4base": (16, ["\t{ .reg .b64 %vh; .reg .b32 %vsl, %vgl; .reg .pred %vt;",
                    "\tcvt.u32.u64 %vsl, %ntop_p0_bs_start;", "\tcvt.u32.u64 %vgl, %ntop_p0_bs_gstart;",
                    "\tst.global.cs.v4.b32 [%ntop_sa], {%vsl, %ntop_v0, %ntop_v1, %vgl};",
                    "\tsetp.eq.u32 %vt, %ntop_tl, 0;", "\tmul.lo.u64 %vh, %ntop_nb, %ntop_d1;",
                    "\tmad.lo.u64 %vh, %vh, 16, %ntop_d2;", "\tmad.lo.u64 %vh, %ntop_bl, 16, %vh;",
                    "\t@%vt st.global.cs.v2.b64 [%vh], {%ntop_p0_bs_start, %ntop_p0_bs_gstart}; }"]),
    "blkred": (24, ["\t{ .reg .b64 %vb, %ve; .reg .pred %vt;", "\tmad.lo.u64 %vb, %ntop_bl, 32, %ntop_d2;",
                    "\tadd.u64 %ve, %ntop_p0_bs_cycles, %ntop_p0_bs_start;",
                    "\tred.global.max.u64 [%vb+16], %ve;", "\tsetp.eq.u32 %vt, %ntop_tl, 0;",
                    "\t@%vt st.global.cs.v2.b64 [%vb], {%ntop_p0_bs_start, %ntop_p0_bs_gstart};",
                    "\t@%vt st.global.cs.b32 [%vb+24], %ntop_v1; }"]),
    "blkred2": (24, ["\t{ .reg .b64 %vb, %ve, %vn; .reg .pred %vt;", "\tmad.lo.u64 %vb, %ntop_bl, 32, %ntop_d2;",
                     "\tadd.u64 %ve, %ntop_p0_bs_cycles, %ntop_p0_bs_start;",
                     "\tnot.b64 %vn, %ntop_p0_bs_start;",
                     "\tred.global.max.u64 [%vb], %vn;",
                     "\tred.global.max.u64 [%vb+16], %ve;", "\tsetp.eq.u32 %vt, %ntop_tl, 0;",
                     "\t@%vt st.global.cs.b64 [%vb+8], %ntop_p0_bs_gstart;",
                     "\t@%vt st.global.cs.b32 [%vb+24], %ntop_v1; }"]),
    "blkred2e": (24, ["\t{ .reg .b64 %vb, %ve; .reg .pred %vt;", "\tmad.lo.u64 %vb, %ntop_bl, 40, %ntop_d2;",
                      "\tadd.u64 %ve, %ntop_p0_bs_cycles, %ntop_p0_bs_start;",
                      "\tred.global.max.u64 [%vb+24], %ve;", "\tsetp.eq.u32 %vt, %ntop_tl, 0;",
                      "\t@%vt st.global.cs.b64 [%vb+8], %ntop_p0_bs_start;",
                      "\t@%vt st.global.cs.b64 [%vb+16], %ntop_p0_bs_gstart;",
                      "\t@%vt st.global.cs.v2.b32 [%vb+32], {%ntop_v1, %ntop_v1}; }"]),
    "p8w0": (8, ["\t{ .reg .b64 %vh; .reg .b32 %vsl; .reg .pred %vt;", "\tcvt.u32.u64 %vsl, %ntop_p0_bs_start;",
                 "\tst.global.cs.v2.b32 [%ntop_sa], {%vsl, %ntop_v0};", "\tsetp.eq.u32 %vt, %ntop_tl, 0;",
                 "\tmul.lo.u64 %vh, %ntop_nb, %ntop_d1;", "\tmad.lo.u64 %vh, %vh, 8, %ntop_d2;",
                 "\tmad.lo.u64 %vh, %ntop_bl, 32, %vh;",
                 "\t@%vt st.global.cs.v2.b64 [%vh], {%ntop_p0_bs_start, %ntop_p0_bs_gstart};",
                 "\t@%vt st.global.cs.b32 [%vh+16], %ntop_v1; }"]),
}


def restride(lines, stride):
    for text in RECORD_STRIDE:
        i = find(lines, text, f"stride {stride}")
        lines = lines[:i] + ["\t" + text.replace(" 24,", f" {stride},")] + lines[i + 1:]
    return lines


def packed(name, emitted):
    stride, stores = PACKED[name] if name in PACKED else BLOCKWISE[name]
    body = restride(emitted, stride)
    i = find(body, RECORD_STORES[2], name)
    return drop(body[:i], RECORD_STORES[:2]) + stores + body[i + 1:]


def no_exit_reads(lines, smid):
    i = find(lines, "mov.u64 %ntop_p0_bs_cycles, %clock64;", "exit clock")
    lines = lines[:i] + ["\tmov.u64 %ntop_p0_bs_cycles, %ntop_p0_bs_start;"] + lines[i + 1:]
    if smid:
        i = find(lines, "mov.u32 %ntop_p0_bs_smid, %smid;", "exit SM id")
        lines = lines[:i] + ["\tmov.u32 %ntop_p0_bs_smid, 0;"] + lines[i + 1:]
    return lines


def stores_off(lines, never, what):
    """The record's stores predicated on `setp.eq.u64 %vnever, <never>`: a
    condition that never holds at run time but ptxas cannot rule out, so it
    keeps every instruction that feeds them."""
    i = find(lines, RECORD_STORES[0], what)
    body = lines[:i] + [f"\t{{ .reg .pred %vnever; setp.eq.u64 %vnever, {never};"] + lines[i:]
    body = [("\t@%vnever " + line.strip()) if any(t in line for t in RECORD_STORES) else line for line in body]
    j = find(body, "@%vnever " + RECORD_STORES[2], what)
    return body[:j + 1] + ["\t}"] + body[j + 1:]


def variant(name, emitted, orig_kernel, header, general=None):
    """The variant `name` of one kernel's probed PTX (a list of lines)."""
    if name == "emitted":
        return emitted
    if name == "general":
        return general
    if name == "orig":
        return header + orig_kernel
    if name == "onestore":
        return drop(emitted, RECORD_STORES[:2])
    if name == "nostore":
        return drop(emitted, RECORD_STORES)
    if name == "nosmid":
        i = find(emitted, "mov.u32 %ntop_p0_bs_smid, %smid", name)
        return emitted[:i] + [emitted[i].replace("%smid", "0")] + emitted[i + 1:]
    if name == "lanes":
        i = find(emitted, "@!%ntop_lane0 bra", name)
        e = find(emitted, "$ntop_lane_0:", name)
        return emitted[:i] + LANES.split("\n") + emitted[e:]
    if name == "entry16":
        body = drop(emitted, RECORD_STORES[:2])
        i = find(body, "setp.eq.u32 %ntop_lane0", name)
        return body[:i + 1] + ["\t@%ntop_lane0 st.global.cs.b64 [%ntop_hr0], %ntop_p0_bs_start;",
                               "\t@%ntop_lane0 st.global.cs.b64 [%ntop_hr0+8], %ntop_p0_bs_gstart;"] + body[i + 1:]
    if name == "nomem":
        return stores_off(emitted, "%ntop_p0_bs_gstart, 0", name)
    if name == "noclock":
        return no_exit_reads(emitted, smid=False)
    if name == "noread":
        return no_exit_reads(variant("nomem", emitted, orig_kernel, header), smid=True)
    if name in ("idx1d", "idx1dm"):
        body = variant("nomem", emitted, orig_kernel, header) if name == "idx1dm" else emitted
        i = find(body, "%ntop_p0_bs_gstart, %globaltimer;", name) + 1  # the address arithmetic follows
        j = find(body, RECORD_STRIDE[1], name)
        return body[:i] + IDX1D.rstrip("\n").split("\n") + body[j + 1:]
    if name in ("nomemp", "nomemclk"):
        body = stores_off(emitted, "%ntop_hr0, 1", name)
        if name == "nomemclk":
            body = [line.replace("%clock64;", "0;").replace("%globaltimer;", "0;")
                    if "mov.u64 %ntop_p0_bs_start," in line or "mov.u64 %ntop_p0_bs_gstart," in line else line
                    for line in body]
        return body
    if name == "lateclk":
        reads = [line for line in emitted if "mov.u64 %ntop_p0_bs_start, %clock64;" in line or
                 "mov.u64 %ntop_p0_bs_gstart, %globaltimer;" in line]
        body = [line for line in emitted if line not in reads]
        k = next((i for i, line in enumerate(body) if "ld.global" in line), None)
        if k is None:
            return emitted
        return body[:k + 1] + reads + body[k + 1:]
    if name == "noglobal":
        i = find(emitted, "%globaltimer;", name)
        return emitted[:i] + [emitted[i].replace("%globaltimer", "%clock64")] + emitted[i + 1:]
    if name in PACKED or (name in BLOCKWISE and name != "blkred2e"):
        return packed(name, emitted)
    if name == "blkred2e":
        body = packed(name, emitted)
        i = find(body, "setp.eq.u32 %ntop_lane0, %ntop_w0, 0;", name)
        return body[:i + 1] + ["\t.reg .b64 %vbe, %vne;", "\tmad.lo.u64 %vbe, %ntop_bl, 40, %ntop_d2;",
                               "\tnot.b64 %vne, %ntop_p0_bs_start;",
                               "\t@%ntop_lane0 red.global.max.u64 [%vbe], %vne;"] + body[i + 1:]
    if name in ("l2hint", "l2wb"):
        q = "st.global.L2::cache_hint." if name == "l2hint" else "st.global."
        body = [line.replace("st.global.cs.", q) if any(t in line for t in RECORD_STORES) else line
                for line in emitted]
        if name == "l2hint":
            body = [line.replace("};", "}, %vpol;").replace("%ntop_x0;", "%ntop_x0, %vpol;")
                    if "L2::cache_hint" in line else line for line in body]
            i = find(body, "setp.eq.u32 %ntop_lane0, %ntop_w0, 0;", name)
            body = body[:i + 1] + ["\t.reg .b64 %vpol;",
                                   "\tcreatepolicy.fractional.L2::evict_last.b64 %vpol, 1.0;"] + body[i + 1:]
        return body
    if name == "samesm":
        body = drop(emitted, RECORD_STORES[:2])
        i = find(body, RECORD_STORES[2], name)
        return body[:i] + ["\tmad.wide.u32 %ntop_sa, %ntop_p0_bs_smid, 8, %ntop_d2;",
                           "\tst.global.cs.v2.b32 [%ntop_sa], {%ntop_v0, %ntop_v1};"] + body[i + 1:]
    if name == "w0":
        i = find(emitted, RECORD_STRIDE[1], name)
        j = find(emitted, "and.b32 %ntop_w0, %ntop_tl, 31;", name)
        body = emitted[:i + 1] + ["\tmad.lo.u64 %ntop_hr0, %ntop_bl, 24, %ntop_d2;"] + emitted[i + 1:j] + \
            ["\tmov.u32 %ntop_w0, %ntop_tl;"] + emitted[j + 1:]
        return body
    if name == "block":
        k = list(orig_kernel)
        i = find(k, ")", name)
        if k[i].strip() != ")" or k[i + 1].strip() != "{":
            raise VariantError("block: the kernel's parameter list does not end as expected")
        rets = [j for j, line in enumerate(k) if line.strip() == "ret;"]
        if len(rets) != 1:
            raise VariantError(f"block: {len(rets)} ret statements, the variant handles one")
        r = rets[0]
        k[i - 1] = k[i - 1] + ","
        return header + k[:i] + ["\t.param .u64 ntop_map0"] + k[i:i + 2] + BLOCK_ENTRY.rstrip("\n").split("\n") + \
            k[i + 2:r] + BLOCK_EXIT.rstrip("\n").split("\n") + k[r:]
    raise VariantError(f"no variant {name}")


def split_module(ptx, entry):
    """(header lines, the lines of kernel `entry`) of nvcc's PTX."""
    lines = ptx.split("\n")
    first = find(lines, ".visible .entry", "module")
    start = find(lines, ".visible .entry " + entry, entry)
    end = next((j for j in range(start, len(lines)) if lines[j] == "}"), None)
    if end is None:
        raise VariantError(f"{entry}: no closing brace")
    return lines[:first], lines[start:end + 1]


def make(ntop, out):
    """Writes out/<kernel>.<variant>.ptx for every kernel and variant."""
    os.makedirs(out, exist_ok=True)
    ptx = os.path.join(out, "app_cost.ptx")
    subprocess.run([nvcc(), "-arch=sm_90", "-ptx", "-o", ptx, os.path.join(ROOT, "examples/cuda/app_cost.cu")],
                   check=True)
    text = open(ptx).read()
    made = []
    for kernel, entry in KERNELS.items():
        forms = {}
        for form, probe, shape in (("1d", "block_sched", ["--1d"]), ("any", "block_sched", []),
                                   ("blockmap", os.path.join(ROOT, "tests/gpu/block_span.toml"), ["--1d"])):
            probed = os.path.join(out, f"{kernel}.probed-{form}.ptx")
            subprocess.run([ntop, "instrument", "-p", probe, "-k", entry, ptx, "-o", probed,
                            "--arch", "sm_90"] + shape, check=True, stdout=subprocess.DEVNULL)
            forms[form] = open(probed).read().split("\n")
        header, orig_kernel = split_module(text, entry)
        for v in VARIANTS:
            path = os.path.join(out, f"{kernel}.{v}.ptx")
            with open(path, "w") as f:
                f.write("\n".join(forms["blockmap"] if v == "blockmap" else
                                   variant(v, forms["1d"], orig_kernel, header, forms["any"])))
            made.append(path)
    return made


def nvcc():
    return shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"


def ptxas():
    return shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"


def selftest(ntop):
    fails = 0

    def expect(cond, what):
        nonlocal fails
        if not cond:
            print("FAIL:", what)
            fails += 1

    with tempfile.TemporaryDirectory() as d:
        for path in make(ntop, d):
            r = subprocess.run([ptxas(), "-arch=sm_90", path, "-o", os.devnull], capture_output=True, text=True)
            expect(r.returncode == 0, f"{os.path.basename(path)} does not assemble: {r.stderr.strip()[:300]}")
        for kernel in KERNELS:
            v = {name: open(os.path.join(d, f"{kernel}.{name}.ptx")).read() for name in VARIANTS}
            lane = {name: text[text.find("@!%ntop_lane0 bra"):] for name, text in v.items()}
            expect("ntop_map0" not in v["orig"], f"{kernel}: orig is probed")
            expect("[%ntop_hc0]" not in v["emitted"], f"{kernel}: emitted stores a count (block_sched's is static)")
            expect(all(s in lane["emitted"] for s in RECORD_STORES), f"{kernel}: emitted lacks a record store")
            expect(lane["onestore"].count("st.global") == 1 and RECORD_STORES[2] in lane["onestore"],
                   f"{kernel}: onestore")
            expect("st.global" not in lane["nostore"].split("$ntop_lane_0:")[0], f"{kernel}: nostore stores")
            expect("%laneid" in v["lanes"] and v["lanes"].count("st.global.cs.b64 [%va], %vv;") == 1, f"{kernel}: lanes")
            expect(lane["nomem"].count("@%vnever st.global") == 3, f"{kernel}: nomem")
            expect(lane["noclock"].count("%clock64") == 0 and lane["noclock"].count("st.global") == 3, f"{kernel}: noclock")
            expect("%clock64" not in lane["noread"] and "%smid" not in lane["noread"] and
                   lane["noread"].count("@%vnever st.global") == 3, f"{kernel}: noread")
            expect("%ctaid.y" not in v["idx1d"] and lane["idx1d"].count("st.global") == 3, f"{kernel}: idx1d")
            expect("%ntid.y" not in v["emitted"] and "%ntid.y" in v["general"], f"{kernel}: emitted/general shapes")
            expect("%ctaid.y" not in v["idx1dm"] and lane["idx1dm"].count("@%vnever st.global") == 3, f"{kernel}: idx1dm")
            expect(lane["nomemp"].count("@%vnever st.global") == 3 and "%clock64" in v["nomemp"], f"{kernel}: nomemp")
            expect("%ntop_p0_bs_start, 0;" in v["nomemclk"] and "%globaltimer" not in v["nomemclk"], f"{kernel}: nomemclk")
            expect(kernel == "fill" or v["lateclk"].index("%globaltimer") > v["lateclk"].index("ld.global"),
                   f"{kernel}: lateclk")
            expect("%globaltimer" not in v["noglobal"] and "%globaltimer" in v["emitted"], f"{kernel}: noglobal")
            expect("mov.u32 %ntop_p0_bs_smid, 0;" in v["nosmid"], f"{kernel}: nosmid reads the SM id")
            expect(v["entry16"].count("@%ntop_lane0 st.global.cs.b64 [%ntop_hr0") == 2, f"{kernel}: entry16")
            for name, (stride, stores) in list(PACKED.items()) + list(BLOCKWISE.items()):
                expect(f"mad.wide.u32 %ntop_hr0, %ntop_uw, {stride}, %ntop_d0;" in v[name] and
                       lane[name].count("st.global") + lane[name].count("red.global") ==
                       len([x for x in stores if "st.global" in x or "red.global" in x]),
                       f"{kernel}: {name}")
            expect("mad.wide.u32 %ntop_sa, %ntop_p0_bs_smid, 8" in v["samesm"] and lane["samesm"].count("st.global") == 1,
                   f"{kernel}: samesm")
            expect("mov.u32 %ntop_w0, %ntop_tl;" in v["w0"] and "%ntop_bl, 24, %ntop_d2" in v["w0"], f"{kernel}: w0")
            expect(v["blockmap"].count("red.global.max.u64") == 2 and "@%ntop_t0 st.global" in v["blockmap"],
                   f"{kernel}: blockmap")
            expect("atom.shared.add.u32" in v["block"] and "bar.sync 0;" in v["block"] and
                   v["block"].count(".param .u64 ntop_map0") == 1, f"{kernel}: block")
    print("ptx_variants selftest", "FAILED" if fails else "ok")
    return 1 if fails else 0


def main(argv):
    if len(argv) >= 3 and argv[1] in ("make", "selftest") and argv[2] == "--ntop":
        ntop = argv[3] if len(argv) > 3 else ""
        if argv[1] == "selftest":
            return selftest(ntop)
        if len(argv) == 6 and argv[4] == "--out":
            for path in make(ntop, argv[5]):
                print(path)
            return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (VariantError, subprocess.CalledProcessError, OSError) as e:
        print(f"ptx_variants: {e}", file=sys.stderr)
        sys.exit(1)
