#!/usr/bin/env python3
"""Variants of block_sched's probed PTX, to see what in the probe costs what
inside the kernel (doc/performance.md, "block_sched's exit stores").

examples/cuda/app_cost.cu's fill, copy and reduce kernels are compiled to PTX
(nvcc -ptx) and probed by `ntop instrument -p block_sched`; each variant is
that probed PTX edited as text:

  orig      the kernel as nvcc wrote it
  emitted   block_sched as ntop emits it
  onestore  only the record's last 8 bytes stored (one store)
  lanes     the 24-byte record from 3 lanes in one store
  nosmid    the SM id not read (0 stored)
  entry16   the record's first 16 bytes stored at entry
  nostore   nothing stored at the exit (the entry's clock reads stay)
  block     one record per block: thread 0 keeps its entry clocks in shared
            memory after a barrier, the block's last thread out (a
            shared-memory atomic per warp) stores 24 bytes

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
VARIANTS = ("orig", "emitted", "onestore", "lanes", "nosmid", "entry16", "nostore", "block")

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
\tst.global.b64 [%va], %vv;
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
\tst.global.u32 [%bk_b], 24;
\tshl.b64 %bk_nb, %bk_nb, 2;
\tadd.u64 %bk_nb, %bk_nb, 15;
\tand.b64 %bk_nb, %bk_nb, -16;
\tadd.u64 %bk_c, %bk_c, %bk_nb;
\tmad.lo.u64 %bk_c, %bk_a, 24, %bk_c;
\tst.global.b64 [%bk_c], %bk_start;
\tst.global.b64 [%bk_c+8], %bk_gstart;
\tst.global.v2.b32 [%bk_c+16], {%bk_el, %bk_sm};
$bk_done:
"""

RECORD_STORES = ("st.global.b64 [%ntop_sa],", "st.global.b64 [%ntop_sa+8],", "st.global.v2.b32 [%ntop_sa+16],")


class VariantError(Exception):
    pass


def find(lines, text, what):
    for i, line in enumerate(lines):
        if text in line:
            return i
    raise VariantError(f"{what}: no line with {text!r} (has ntop's emitted form changed?)")


def drop(lines, texts):
    return [line for line in lines if not any(t in line for t in texts)]


def variant(name, emitted, orig_kernel, header):
    """The variant `name` of one kernel's probed PTX (a list of lines)."""
    if name == "emitted":
        return emitted
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
        return body[:i + 1] + ["\t@%ntop_lane0 st.global.b64 [%ntop_hr0], %ntop_p0_bs_start;",
                               "\t@%ntop_lane0 st.global.b64 [%ntop_hr0+8], %ntop_p0_bs_gstart;"] + body[i + 1:]
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
        probed = os.path.join(out, f"{kernel}.probed.ptx")
        subprocess.run([ntop, "instrument", "-p", "block_sched", "-k", entry, ptx, "-o", probed, "--arch", "sm_90"],
                       check=True, stdout=subprocess.DEVNULL)
        emitted = open(probed).read().split("\n")
        header, orig_kernel = split_module(text, entry)
        for v in VARIANTS:
            path = os.path.join(out, f"{kernel}.{v}.ptx")
            with open(path, "w") as f:
                f.write("\n".join(variant(v, emitted, orig_kernel, header)))
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
            expect("%laneid" in v["lanes"] and v["lanes"].count("st.global.b64 [%va], %vv;") == 1, f"{kernel}: lanes")
            expect("mov.u32 %ntop_p0_bs_smid, 0;" in v["nosmid"], f"{kernel}: nosmid reads the SM id")
            expect(v["entry16"].count("@%ntop_lane0 st.global.b64 [%ntop_hr0") == 2, f"{kernel}: entry16")
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
