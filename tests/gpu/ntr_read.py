#!/usr/bin/env python3
"""Reads ntop result files (results/<pid>-<seq>.ntr, versions 1 to 6, layout in
doc/trace-format.md) in Python, for the GPU proof scripts
(tests/gpu/ncu_probes.py sums probe fields per launch with it).

The C reader (src/trace/result.c) is the reference; this one exists so the
scripts need nothing but python3 and libzstd (through ctypes: no `zstandard`
module on the GPU machine), and so a second, independent reader checks the
first when `ntop export --view records` is there too. It refuses what it does
not know (other versions, unknown map flags, extra descriptor bytes such as a
block-sampling field added later) with a message, never guesses.

  ntr_read.py dump FILE...   header, maps and per-field sums of each file
  ntr_read.py check DIR      every result file of trace DIR read, its records
                             and dropped records compared with the hook's
                             `result` events (exit 1 on a difference)
  ntr_read.py selftest       writes synthetic files and reads them back
"""
import ctypes
import ctypes.util
import os
import struct
import sys

MAGIC = b"NTOPRES\0"
HEADER_V1 = 104
TYPE_U32, TYPE_U64 = 4, 8
FLAG_SLOT_MAJOR = 1
FLAG_KEPT_COUNTS = 2  # counts of the kept units only (the CUDA hook's sampled maps)
SHIFT_MASK = 31 << 8  # map flags bits 8-12: block-sampling shift


class NtrError(Exception):
    pass


_zstd = None


def zstd():
    """libzstd through ctypes (loaded once)."""
    global _zstd
    if _zstd is None:
        name = ctypes.util.find_library("zstd") or "libzstd.so.1"
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            raise NtrError(f"cannot load libzstd ({name}): {e}")
        lib.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
        lib.ZSTD_getFrameContentSize.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        lib.ZSTD_decompress.restype = ctypes.c_size_t
        lib.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
        lib.ZSTD_compress.restype = ctypes.c_size_t
        lib.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
        lib.ZSTD_compressBound.restype = ctypes.c_size_t
        lib.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
        lib.ZSTD_isError.restype = ctypes.c_uint
        lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
        _zstd = lib
    return _zstd


def zstd_decompress(frame, want):
    lib = zstd()
    size = lib.ZSTD_getFrameContentSize(frame, len(frame))
    if size >= (1 << 64) - 2:  # ZSTD_CONTENTSIZE_UNKNOWN / _ERROR
        raise NtrError("zstd frame without a content size")
    if size != want:
        raise NtrError(f"zstd frame holds {size} bytes, descriptor says {want}")
    out = ctypes.create_string_buffer(max(want, 1))
    n = lib.ZSTD_decompress(out, want, frame, len(frame))
    if lib.ZSTD_isError(n) or n != want:
        raise NtrError(f"zstd decompression failed ({n} of {want} bytes)")
    return out.raw[:want]


def zstd_compress(data):
    lib = zstd()
    cap = lib.ZSTD_compressBound(len(data))
    out = ctypes.create_string_buffer(cap)
    n = lib.ZSTD_compress(out, cap, data, len(data), 3)
    if lib.ZSTD_isError(n):
        raise NtrError("zstd compression failed")
    return out.raw[:n]


class Reader:
    def __init__(self, buf):
        self.buf = buf
        self.pos = 0

    def take(self, n, what):
        if n < 0 or self.pos + n > len(self.buf):
            raise NtrError(f"truncated at byte {self.pos}: {what} needs {n} bytes")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def u32(self, what):
        return struct.unpack("<I", self.take(4, what))[0]

    def u64(self, what):
        return struct.unpack("<Q", self.take(8, what))[0]

    def string(self, what):
        n = self.u32(what)
        if n > (1 << 20):
            raise NtrError(f"{what}: string of {n} bytes")
        return self.take(n, what).decode("utf-8", "replace")


def read_map(rd, block, version=3):
    start = rd.pos
    desc_bytes = rd.u32("descriptor size")
    level, cap, rec_size, n_fields, flags = (rd.u32(w) for w in ("level", "cap", "rec_size", "n_fields", "flags"))
    units, counts_bytes, records_bytes, frame_bytes = (rd.u64(w) for w in ("units", "counts", "records", "frame"))
    name = rd.string("map name")
    if level not in (1, 2, 3) or rec_size == 0 or n_fields > 16:  # 3: a block map
        raise NtrError(f"map {name}: level {level}, rec_size {rec_size}, {n_fields} fields")
    if flags & ~(FLAG_SLOT_MAJOR | FLAG_KEPT_COUNTS | SHIFT_MASK):
        raise NtrError(f"map {name}: unknown flags 0x{flags:x} (newer ntop?)")
    shift = (flags & SHIFT_MASK) >> 8  # block sampling (version 3): 1 block in 2^shift kept
    kept_counts = bool(flags & FLAG_KEPT_COUNTS)
    if kept_counts and not shift:
        raise NtrError(f"map {name}: kept units' counts in a map that is not sampled")
    rec_units, upb = units, 0
    if shift:
        threads = block[0] * block[1] * block[2]
        upb = threads if level == 1 else 1 if level == 3 else (threads + 31) // 32
        if not upb or units % upb:
            raise NtrError(f"map {name}: {units} units are not whole blocks of {upb}")
        blocks = units // upb
        rec_units = ((blocks + (1 << shift) - 1) >> shift) * upb
    fields = []
    for _ in range(n_fields):
        fname = rd.string("field name")
        ftype, off = rd.u32("field type"), rd.u32("field offset")
        if ftype not in (TYPE_U32, TYPE_U64) or off + ftype > rec_size:
            raise NtrError(f"map {name}: field {fname} type {ftype} at {off} in {rec_size}-byte records")
        fields.append((fname, ftype, off))
    extra = desc_bytes - (rd.pos - start)
    if extra < 0:
        raise NtrError(f"map {name}: descriptor of {desc_bytes} bytes is shorter than its contents")
    if extra:
        # Appended descriptor fields (doc/trace-format.md, compatibility) may
        # change what the records mean (block sampling): refuse, do not guess.
        raise NtrError(f"map {name}: {extra} descriptor bytes this reader does not know (newer ntop?)")
    stored = cap  # record slots stored per unit: every one before version 4
    if version >= 4:
        # version 4: only the first `stored` slots of each unit (the most any
        # unit with records filled); none for a map without units
        stored, rest = divmod(records_bytes, rec_units * rec_size) if rec_units else (0, records_bytes)
        if rest:
            raise NtrError(f"map {name}: {records_bytes} record bytes are not whole slots of {rec_units} units")
        if stored > cap:
            raise NtrError(f"map {name}: {records_bytes} record bytes store {stored} slots per unit, cap {cap}")
    if counts_bytes != (rec_units if kept_counts else units) * 4 or records_bytes != rec_units * stored * rec_size:
        raise NtrError(f"map {name}: sizes disagree (units {units}, counts {counts_bytes}, records {records_bytes})")
    data = zstd_decompress(rd.take(frame_bytes, f"map {name} frame"), counts_bytes + records_bytes)
    counts = data[:counts_bytes]
    if kept_counts:
        # as the C reader: spread over every unit, 0 for the blocks not kept
        # (their records not sampled are unknown, not 0)
        full = bytearray(units * 4)
        for ru in range(rec_units):
            u = ((ru // upb) << shift) * upb + ru % upb
            full[u * 4:u * 4 + 4] = counts[ru * 4:ru * 4 + 4]
        counts = bytes(full)
    m = {
        "name": name, "level": {1: "thread", 2: "warp", 3: "block"}[level], "cap": cap, "rec_size": rec_size,
        "fields": fields, "units": units, "slot_major": bool(flags & FLAG_SLOT_MAJOR),
        "sample_shift": shift, "rec_units": rec_units, "units_per_block": upb, "stored": stored,
        "counts": counts, "records": data[counts_bytes:], "unsampled_unknown": kept_counts,
    }
    if stored < cap:
        # as the C reader: no unit with records may hold more than is stored
        counts = memoryview(m["counts"]).cast("I")
        for u, c in enumerate(counts):
            if min(c, cap * rec_size) // rec_size > stored and unit_kept(m, u):
                raise NtrError(f"map {name}: unit {u} holds more records ({min(c, cap * rec_size) // rec_size}) "
                               f"than the file stores per unit ({stored})")
    return m


def unit_kept(m, u):
    """Does unit u have records (its block kept by block sampling)?"""
    shift, upb = m.get("sample_shift", 0), m.get("units_per_block", 0)
    return not shift or not (u // upb) & ((1 << shift) - 1)


def read_sites(rd):
    """Version 6's site table: files, functions, regions, then per site its
    kind, region, function, PTX line, file, line, column, inlined-at file and
    line, and opcode (0xffffffff: none)."""
    t = {"files": [rd.string("file") for _ in range(rd.u32("files"))]}
    t["funcs"] = [rd.string("function") for _ in range(rd.u32("functions"))]
    t["regions"] = [(rd.string("region"), rd.string("spec")) for _ in range(rd.u32("regions"))]
    sites = []
    for _ in range(rd.u32("sites")):
        v = [rd.u32("site") for _ in range(9)]
        keys = ("kind", "region", "func", "ptx_line", "file", "line", "col", "at_file", "at_line")
        site = dict(zip(keys, v))
        site["opcode"] = rd.string("opcode")
        if site["file"] != 0xFFFFFFFF and site["file"] >= len(t["files"]):
            raise NtrError(f"site file {site['file']} out of range")
        sites.append(site)
    t["sites"] = sites
    return t


def read_bytes(buf):
    rd = Reader(buf)
    if rd.take(8, "magic") != MAGIC:
        raise NtrError("bad magic")
    version, header_bytes, file_bytes = rd.u32("version"), rd.u32("header size"), rd.u64("file size")
    if version not in (1, 2, 3, 4, 5, 6):
        raise NtrError(f"version {version}, this reader knows 1 to 6")
    if file_bytes != len(buf):
        raise NtrError(f"file_bytes {file_bytes} but {len(buf)} bytes on disk")
    if header_bytes < HEADER_V1 or header_bytes > len(buf):
        raise NtrError(f"header of {header_bytes} bytes")
    h = {"version": version}
    h["pid"], h["kid"] = rd.u32("pid"), rd.u32("kid")
    h["seq"] = rd.u64("seq")
    h["grid"] = [rd.u32("grid") for _ in range(3)]
    h["block"] = [rd.u32("block") for _ in range(3)]
    h["smem"], h["device_sms"], h["device_cc"], h["sm_clock_khz"] = (rd.u32(w) for w in ("smem", "sms", "cc", "clock"))
    h["wall_ns"], h["duration_ns"] = rd.u64("wall"), rd.u64("duration")
    n_maps, flags = rd.u32("n_maps"), rd.u32("flags")
    if n_maps > 64:
        raise NtrError(f"{n_maps} maps")
    if flags & ~1 or (flags & 1 and version < 6):
        raise NtrError(f"header flags {flags:#x} in a version {version} file")
    rd.pos = header_bytes
    h["kernel"], h["probes"] = rd.string("kernel"), rd.string("probes")
    h["sites"] = read_sites(rd) if flags & 1 else None
    h["maps"] = [read_map(rd, h["block"], version) for _ in range(n_maps)]
    if rd.pos != len(buf):
        raise NtrError(f"{len(buf) - rd.pos} trailing bytes")
    return h


def read_file(path):
    try:
        with open(path, "rb") as f:
            return read_bytes(f.read())
    except NtrError as e:
        raise NtrError(f"{path}: {e}")


def map_stats(m):
    """(records written, records dropped) as the C reader derives them, over
    the units whose block was sampled (all, unless sample_shift)."""
    cap_bytes = m["cap"] * m["rec_size"]
    written = dropped = 0
    counts = memoryview(m["counts"]).cast("I")
    shift, upb = m.get("sample_shift", 0), m.get("units_per_block", 0)
    for u, c in enumerate(counts):
        if shift and (u // upb) & ((1 << shift) - 1):
            continue  # block not sampled: counted, not kept
        w = min(c, cap_bytes) // m["rec_size"]
        written += w
        dropped += c // m["rec_size"] - w
    return written, dropped


def written_slots(m):
    """Index (in the record area) of every record a unit wrote: the first
    min(count, cap * rec_size) // rec_size slots of each unit with records
    (all stored: read_map checks). Slots past a unit's count hold stale
    bytes (the hook clears only the counts between launches), so nothing
    else may be read. Record k of kept unit ru is at k * rec_units + ru
    (slot-major) or ru * stored + k (unit-major)."""
    rec, cap = m["rec_size"], m["cap"]
    stored = m.get("stored", cap)
    nru = m.get("rec_units", m["units"])
    shift, upb = m.get("sample_shift", 0), m.get("units_per_block", 0)
    counts = memoryview(m["counts"]).cast("I")
    out = []
    for u, c in enumerate(counts):
        if not unit_kept(m, u):
            continue  # block not sampled: counted, not kept
        ru = ((u // upb) >> shift) * upb + u % upb if shift else u
        for k in range(min(min(c, cap * rec) // rec, stored)):
            out.append(k * nru + ru if m["slot_major"] else ru * stored + k)
    return out


def field_sums(m):
    """{field: sum over the records units wrote}, in either layout."""
    rec = m["rec_size"]
    mv = memoryview(m["records"])
    idx = written_slots(m) if len(mv) else []
    out = {}
    for name, ftype, off in m["fields"]:
        fmt = "<I" if ftype == TYPE_U32 else "<Q"
        out[name] = sum(struct.unpack_from(fmt, mv, i * rec + off)[0] for i in idx)
    return out


# --------------------------------------------------------------------------
# writing (selftest only)
# --------------------------------------------------------------------------


def _str(s):
    b = s.encode()
    return struct.pack("<I", len(b)) + b


def write_bytes(kernel, probes, maps, seq=1, pid=7, kid=1, duration_ns=1000, version=2, extra_desc=b"",
                grid=(1, 1, 1), block=(64, 1, 1), kept_counts=False):
    """maps: [(name, level 1|2, cap, rec_size, [(field, type, off)], units,
    counts bytes, records bytes, slot_major[, sample shift])]; kept_counts:
    the sampled maps' counts are the kept units' only (flag bit 1)."""
    body = _str(kernel) + _str(probes)
    for name, level, cap, rec, fields, units, counts, records, slot, *shift in maps:
        frame = zstd_compress(counts + records)
        fb = b"".join(_str(f) + struct.pack("<II", t, o) for f, t, o in fields)
        nb = _str(name)
        desc_bytes = 56 + len(nb) + len(fb) + len(extra_desc)
        flags = (FLAG_SLOT_MAJOR if slot else 0) | (shift[0] << 8 if shift else 0)
        flags |= FLAG_KEPT_COUNTS if kept_counts and shift else 0
        body += struct.pack("<IIIIII", desc_bytes, level, cap, rec, len(fields), flags)
        body += struct.pack("<QQQQ", units, len(counts), len(records), len(frame)) + nb + fb + extra_desc + frame
    total = HEADER_V1 + len(body)
    head = MAGIC + struct.pack("<IIQ", version, HEADER_V1, total) + struct.pack("<IIQ", pid, kid, seq)
    head += struct.pack("<3I3I", *grid, *block) + struct.pack("<IIII", 0, 132, 90, 1980000)
    head += struct.pack("<QQII", 0, duration_ns, len(maps), 0)
    assert len(head) == HEADER_V1
    return head + body


def selftest():
    fails = 0

    def expect(cond, what):
        nonlocal fails
        if not cond:
            fails += 1
            print(f"ntr_read selftest FAIL: {what}")

    # gmem_bytes-like thread map, cap 1: 64 threads, thread i loads 4*i bytes,
    # stores 8; thread 63 never saved (count 0: its record holds stale bytes
    # from an earlier launch, which must not be summed).
    units = 64
    counts = struct.pack(f"<{units}I", *([16] * 63 + [0]))
    recs = b"".join(struct.pack("<IIII", 4 * i, 8, 0, 0) if i < 63 else struct.pack("<IIII", 999, 999, 999, 999)
                    for i in range(units))
    gb = ("gmem_bytes", 1, 1, 16, [("load", 4, 0), ("store", 4, 4), ("atomic", 4, 8), ("async", 4, 12)],
          units, counts, recs, False)
    # slot-major thread map, cap 2, u64 field: unit u's slot k holds 100*u+k;
    # unit 0 tried 3 records (one dropped).
    u2 = 4
    c2 = struct.pack("<4I", 48, 32, 16, 0)
    r2 = bytearray(2 * u2 * 16)
    for u in range(u2):
        for k in range(2):
            if k * 16 < min(struct.unpack_from("<I", c2, 4 * u)[0], 32):
                struct.pack_into("<QQ", r2, (k * u2 + u) * 16, 100 * u + k, 1)
    dm = ("dmat", 1, 2, 16, [("addr", 8, 0), ("n", 8, 8)], u2, c2, bytes(r2), True)
    buf = write_bytes("_Z1kv", "gmem_bytes,dmat", [gb, dm], seq=5)
    h = read_bytes(buf)
    expect(h["seq"] == 5 and h["kernel"] == "_Z1kv" and len(h["maps"]) == 2, f"header {h['seq']} {h['kernel']}")
    s = field_sums(h["maps"][0])
    expect(s == {"load": 4 * sum(range(63)), "store": 8 * 63, "atomic": 0, "async": 0}, f"sums {s}")
    expect(map_stats(h["maps"][0]) == (63, 0), f"stats {map_stats(h['maps'][0])}")
    s2 = field_sums(h["maps"][1])
    expect(s2 == {"addr": 0 + 1 + 100 + 101 + 200, "n": 5}, f"slot-major sums {s2}")
    expect(map_stats(h["maps"][1]) == (5, 1), f"slot-major stats {map_stats(h['maps'][1])}")
    # version 4: the same slot-major map with only its first slot stored (a
    # unit filled at most one): the sums and stats follow the stored bytes
    c4 = struct.pack("<4I", 16, 16, 16, 0)
    r4 = bytes(r2[:u2 * 16])
    dm4 = ("dmat", 1, 2, 16, [("addr", 8, 0), ("n", 8, 8)], u2, c4, r4, True)
    h4 = read_bytes(write_bytes("_Z1kv", "dmat", [dm4], version=4))
    expect(h4["maps"][0]["stored"] == 1 and map_stats(h4["maps"][0]) == (3, 0), f"v4 {h4['maps'][0]['stored']}")
    expect(field_sums(h4["maps"][0]) == {"addr": 0 + 100 + 200, "n": 3}, f"v4 sums {field_sums(h4['maps'][0])}")
    # unit-major (a warp map, cap 3) with 2 slots stored: stride 2, not 3
    c5 = struct.pack("<3I", 16, 32, 0)
    r5 = b"".join(struct.pack("<QQ", 10 * u + k, 1) for u in range(3) for k in range(2))
    wm = ("w", 2, 3, 16, [("v", 8, 0), ("n", 8, 8)], 3, c5, r5, False)
    h5 = read_bytes(write_bytes("k", "p", [wm], version=4, block=(96, 1, 1)))
    expect(h5["maps"][0]["stored"] == 2 and field_sums(h5["maps"][0]) == {"v": 0 + 10 + 11, "n": 3},
           f"unit-major v4 {field_sums(h5['maps'][0])}")
    # sampled (2 blocks of 2 warps, shift 1: block 0 kept) and 1 slot stored;
    # block 1's units tried 3 records each and bound nothing
    c6 = struct.pack("<4I", 16, 0, 48, 48)
    r6 = struct.pack("<QQ", 7, 1) + struct.pack("<QQ", 8, 1)
    sm = ("s", 1, 3, 16, [("v", 8, 0), ("n", 8, 8)], 4, c6, r6, True, 1)
    h6 = read_bytes(write_bytes("k", "p", [sm], version=4, grid=(2, 1, 1), block=(2, 1, 1)))
    expect(h6["maps"][0]["stored"] == 1 and field_sums(h6["maps"][0]) == {"v": 7, "n": 1}
           and map_stats(h6["maps"][0]) == (1, 0), f"sampled v4 {field_sums(h6['maps'][0])}")
    # the same as the CUDA hook writes it: block 0's counts only
    sk = sm[:6] + (c6[:8],) + sm[7:]
    h6k = read_bytes(write_bytes("k", "p", [sk], version=4, grid=(2, 1, 1), block=(2, 1, 1), kept_counts=True))
    expect(h6k["maps"][0]["unsampled_unknown"] and h6k["maps"][0]["counts"] == struct.pack("<4I", 16, 0, 0, 0)
           and field_sums(h6k["maps"][0]) == {"v": 7, "n": 1} and map_stats(h6k["maps"][0]) == (1, 0),
           "sampled v4, kept units' counts")
    # nothing written: counts only
    h7 = read_bytes(write_bytes("k", "p", [dm4[:6] + (bytes(16), b"") + dm4[8:]], version=4))
    expect(h7["maps"][0]["stored"] == 0 and map_stats(h7["maps"][0]) == (0, 0), "v4 counts only")
    refused = ((buf[:-1], "truncated"), (b"X" + buf[1:], "magic"),
               (write_bytes("k", "p", [gb], version=7), "version"),
               (write_bytes("k", "p", [dm4[:6] + (dm4[6], dm4[7][:-16]) + dm4[8:]], version=4), "not whole slots"),
               (write_bytes("k", "p", [dm4[:6] + (dm4[6], dm4[7] * 3) + dm4[8:]], version=4), "cap 2"),
               (write_bytes("k", "p", [dm4[:6] + (struct.pack("<4I", 16, 32, 16, 0),) + dm4[7:]], version=4),
                "unit 1 holds more records (2)"),
               (write_bytes("k", "p", [dm4], version=3), "sizes disagree"),
               (write_bytes("k", "p", [gb], extra_desc=b"\0" * 8), "descriptor bytes"))
    for bad, why in refused:
        try:
            read_bytes(bad)
            expect(False, f"{why}: accepted")
        except NtrError as e:
            expect(why in str(e) or why in ("truncated", "magic", "version"), f"{why}: refused with {e}")
    print("ntr_read selftest", "FAILED" if fails else "ok")
    return 1 if fails else 0


def check_trace(trace_dir):
    """Reads every result named in events.log; 0 when all agree with the events."""
    bad = n = 0
    with open(os.path.join(trace_dir, "events.log"), errors="replace") as f:
        lines = [l.split() for l in f if l.startswith("result ")]
    for parts in lines:
        ev = dict(p.partition("=")[::2] for p in parts[1:])
        try:
            h = read_file(os.path.join(trace_dir, ev.get("file", "")))
        except NtrError as e:
            print(f"FAIL {e}")
            bad += 1
            continue
        n += 1
        w = sum(map_stats(m)[0] for m in h["maps"])
        d = sum(map_stats(m)[1] for m in h["maps"])
        if (str(w), str(d), str(h["seq"])) != (ev.get("records"), ev.get("dropped"), ev.get("seq")):
            print(f"FAIL {ev.get('file')}: seq {h['seq']} records {w} dropped {d}, events say "
                  f"seq {ev.get('seq')} records {ev.get('records')} dropped {ev.get('dropped')}")
            bad += 1
    print(f"ntr_read check: {n} result files read, {bad} problems")
    return 1 if bad or not n else 0


def main(argv):
    if argv == ["selftest"]:
        return selftest()
    if len(argv) == 2 and argv[0] == "check":
        return check_trace(argv[1])
    if len(argv) >= 2 and argv[0] == "dump":
        rc = 0
        for p in argv[1:]:
            try:
                h = read_file(p)
            except NtrError as e:
                print(e)
                rc = 1
                continue
            print(f"{p}: v{h['version']} pid {h['pid']} kid {h['kid']} seq {h['seq']} {h['kernel']} "
                  f"grid {h['grid']} block {h['block']} {h['duration_ns']} ns")
            for m in h["maps"]:
                w, d = map_stats(m)
                print(f"  map {m['name']} {m['level']} cap {m['cap']} x {m['rec_size']} B, {m['units']} units, "
                      f"{w} records, {d} dropped, sums {field_sums(m)}")
        return rc
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
