/* The contract between a launcher (ntop record, the TUI) and the hook, all
 * through the environment of the launched program (children inherit it):
 *
 *   LD_LIBRARY_PATH   starts with the directory holding the hook as libcuda.so.1
 *   NTOP_EVENT_SOCK   absolute path of the launcher's AF_UNIX SOCK_SEQPACKET socket
 *                     (<trace dir>/events.sock, or in a 0700 directory of its own
 *                     when that path is too long): each process of the app
 *                     connects to it itself at its first event line (a fork child
 *                     makes its own connection) and sends one line per message,
 *                     so nothing depends on inherited descriptors (spawn with
 *                     closed fds, daemons that close every fd, another cwd)
 *   NTOP_EVENT_FD     only without NTOP_EVENT_SOCK (tests, the hook run by hand):
 *                     an inherited fd open for writing that receives the lines
 *                     while it stays the file it was at load
 *   NTOP_EVENT_ID     "<st_dev>:<st_ino>" that NTOP_EVENT_FD must be (a process
 *                     that finds another file under the number does not use it)
 *                     When neither can be used: $NTOP_TRACE_DIR/events-<pid>.log,
 *                     made by the process 0600 with O_EXCL, never through a link
 *                     (the launcher follows those files too); else no events.
 *   NTOP_TRACE_DIR    trace directory; results go to its results/ (created 0700).
 *                     Used only while it is the caller's (owner, no group/other
 *                     write); everything below it is opened relative to its
 *                     descriptor, never through a link (hook_dir.c)
 *   NTOP_TRACE_DIR_ID "<st_dev>:<st_ino>" the directory must be (the launcher's,
 *                     not one swapped in under the same path)
 *   NTOP_PROBES       probe TOML paths separated by ':'; unset/empty: nothing probed
 *   NTOP_KERNELS      kernel patterns separated by '\n'; unset: every PTX kernel.
 *                     A pattern with * ? [ is an fnmatch glob on the mangled or
 *                     demangled name; otherwise a substring of either.
 *   NTOP_PROBE_EVERY  probe every Nth launch of a matching kernel (default 1)
 *   NTOP_PROBE_LIMIT  at most this many probed launches per kernel (default 100)
 *   NTOP_MAP_BUDGET   map bytes (default 1 GiB): one launch's maps may take half
 *                     of it (block sampling beyond); spare map buffers are made
 *                     ahead up to twice it, or a quarter of the GPU's memory
 *                     when that is more (doc/hook.md)
 *   NTOP_STAGING_PINNED_MAX  the largest pinned staging buffer for a result
 *                     (default 4 MiB); larger counts and records are staged
 *                     in ordinary memory through two 4 MiB pinned buffers
 *   NTOP_SAMPLE       block sampling of maps that grow with threads x cap
 *                     (dmat) or warps x cap (regions): "auto" (default: only
 *                     when a launch's maps would take more than their target,
 *                     below, or half the budget), "off" (keep every block,
 *                     decline launches over half the budget), or N, a power
 *                     of two: keep the records of 1 block in N (more blocks
 *                     skipped if still too big)
 *   NTOP_WARP_MAP_TARGET  map bytes a launch whose probe keeps many records
 *                     per warp (regions) takes before its blocks are sampled
 *                     (default 2 MiB); such records are copied back whole
 *                     every launch
 *   NTOP_MAP_TARGET   the same for many records per thread (dmat; default
 *                     64 MiB)
 *   NTOP_REAL_LIBCUDA full path of the real driver (found by search if unset)
 *   NTOP_REAL_LIBNVRTC, NTOP_REAL_LIBNVJITLINK  full paths of the real libnvrtc
 *                     and libnvJitLink for ntop's stand-ins (src/jit); the
 *                     launcher sets them, and puts the stand-ins' directories
 *                     on LD_LIBRARY_PATH, only when it found those libraries
 *   NTOP_REAL_LIBAMDHIP64  full path of the real HIP runtime (libamdhip64.so.5)
 *                     for ntop's HIP stand-in; the launcher sets it, and puts
 *                     the stand-in's directory (lib/ntop/hip) on
 *                     LD_LIBRARY_PATH, only when it found the real one
 *   LD_AUDIT, NTOP_AUDIT_MAP  ntop's loader audit module (lib/ntop/libntop_audit.so,
 *                     after the user's own LD_AUDIT) and its rules, lines of
 *                     "PATTERN=STAND-IN": a library opened by a path whose file
 *                     name matches PATTERN (fnmatch) loads STAND-IN instead
 *                     (src/hook/audit/rtld_audit.c); not set with --no-audit
 *   NTOP_ASSEMBLER    "auto" (default: ptxas for copies built off the app's threads,
 *                     else the driver's JIT), "jit" (the driver's cuModuleLoadDataEx
 *                     always) or "ptxas" (always)
 *   NTOP_TIME_LAUNCHES "all", "sample" (default) or "off": launch timing events
 *   NTOP_TIME_GAP_MS  sampled timing: after a kernel's first launch, one per this
 *                     many ms (10)
 *   NTOP_LOG          file for the hook's debug log (never stdout/stderr)
 *   NTOP_KEEP_PTX     "1": write kernels/<pid>-<kid>/{pruned,probed}.ptx
 *   NTOP_CONTROL      path of the live control file (doc/control.md); once it
 *                     exists it replaces NTOP_PROBES/NTOP_KERNELS selection
 *                     (read only when it is a regular file of the caller's that
 *                     group and others cannot write, never through a link)
 */
#ifndef NTOP_HOOK_ENV_H
#define NTOP_HOOK_ENV_H

#define NTOP_ENV_EVENT_SOCK "NTOP_EVENT_SOCK"
#define NTOP_ENV_EVENT_FD "NTOP_EVENT_FD"
#define NTOP_ENV_EVENT_ID "NTOP_EVENT_ID"
#define NTOP_ENV_TRACE_DIR "NTOP_TRACE_DIR"
#define NTOP_ENV_TRACE_DIR_ID "NTOP_TRACE_DIR_ID"
#define NTOP_ENV_PROBES "NTOP_PROBES"
#define NTOP_ENV_KERNELS "NTOP_KERNELS"
#define NTOP_ENV_PROBE_EVERY "NTOP_PROBE_EVERY"
#define NTOP_ENV_PROBE_LIMIT "NTOP_PROBE_LIMIT"
#define NTOP_ENV_MAP_BUDGET "NTOP_MAP_BUDGET"
#define NTOP_ENV_SAMPLE "NTOP_SAMPLE"
#define NTOP_ENV_WARP_MAP_TARGET "NTOP_WARP_MAP_TARGET"
#define NTOP_ENV_MAP_TARGET "NTOP_MAP_TARGET"
#define NTOP_ENV_STAGING_PINNED_MAX "NTOP_STAGING_PINNED_MAX"
#define NTOP_ENV_REAL_LIBCUDA "NTOP_REAL_LIBCUDA"
#define NTOP_ENV_REAL_LIBNVRTC "NTOP_REAL_LIBNVRTC"
#define NTOP_ENV_REAL_LIBNVJITLINK "NTOP_REAL_LIBNVJITLINK"
#define NTOP_ENV_REAL_LIBAMDHIP64 "NTOP_REAL_LIBAMDHIP64"
#define NTOP_ENV_AUDIT_MAP "NTOP_AUDIT_MAP"
#define NTOP_ENV_ASSEMBLER "NTOP_ASSEMBLER"
#define NTOP_ENV_TIME_LAUNCHES "NTOP_TIME_LAUNCHES"
#define NTOP_ENV_TIME_GAP_MS "NTOP_TIME_GAP_MS"
#define NTOP_ENV_PROBE_ASYNC "NTOP_PROBE_ASYNC"
#define NTOP_ENV_SELF_TIME "NTOP_SELF_TIME"
#define NTOP_ENV_LOG "NTOP_LOG"
#define NTOP_ENV_KEEP_PTX "NTOP_KEEP_PTX"
#define NTOP_ENV_CONTROL "NTOP_CONTROL"

#endif
