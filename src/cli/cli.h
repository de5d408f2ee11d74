/* The ntop command: main.c dispatches to one cmd_*.c per subcommand (tmux's
 * cmd-*.c). Commands print to stdout/stderr and return the process exit code:
 * 0 ok, 1 the work failed (a probe did not verify, a file was corrupt), 2 bad
 * usage or an input ntop cannot use. Shared helpers live in cli_*.c. */
#ifndef NTOP_CLI_H
#define NTOP_CLI_H
#include <stdint.h>
#include <stdio.h>

#include "common/strbuf.h"
#include "engine/probe/probe.h"

#ifndef NTOP_VERSION
#define NTOP_VERSION "0.1.0"
#endif

#define CLI_EXIT_USAGE 2

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_instrument(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_probes(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_ls(int argc, char **argv);
/* cmd_start.c: ntop alone on a terminal: the start screen. */
int cmd_start(void);
/* `ntop [OPTIONS] [--] PROGRAM`: the live terminal UI (argv[0] is "ntop"). */
int cmd_live(int argc, char **argv);

/* cli_paths.c: where the installed (or built) pieces are, relative to the
 * binary: <prefix>/bin/ntop, <prefix>/lib/ntop/libcuda.so.1,
 * <prefix>/share/ntop/probes, <prefix>/share/ntop/themes. Environment
 * overrides (tests, packagers): NTOP_HOOK_DIR, NTOP_PROBES_DIR,
 * NTOP_THEMES_DIR. All return malloc'd strings or NULL. */
char *cli_exe_dir(void);
char *cli_hook_dir(void);
char *cli_probes_dir(void);
char *cli_themes_dir(void);
/* `-p NAME` is the built-in NAME.toml; anything with a '/' or ending in
 * ".toml" is a path. Returns a malloc'd path (not checked for existence for
 * paths; built-in names must exist), or NULL with *cause set. */
char *cli_probe_path(const char *arg, char **cause);
/* Absolute form of a path (no symlink resolution needed); malloc'd. */
char *cli_abspath(const char *path);

/* cli_util.c */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "ntop CMD: message" and a hint to --help; returns 2. CMD "ntop"
 * (the live UI's options) prints "ntop: message". */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_is_help(const char *arg);
/* Matches argv[*i] against -s / --long / -sVALUE / --long=VALUE. Returns 1
 * with *val set (advancing *i past a separate value), 0 when argv[*i] is not
 * this option, -1 when the value is missing (after printing the error). */
int cli_opt(const char *cmd, int argc, char **argv, int *i, const char *s, const char *l, const char **val);
/* Non-negative decimal integer; -1 when s is not one. */
int cli_parse_ulong(const char *s, unsigned long *out);
/* Bytes: decimal with an optional K, M, G or T suffix (powers of 1024,
 * either case); -1 when s is not one or overflows. */
int cli_parse_size(const char *s, uint64_t *out);
/* "map NAME: warp, cap 1 x 24 B (start:u64 ...)" or "no map". */
void cli_probe_map_summary(struct strbuf *sb, const struct probe *p);
/* Loads and verifies a probe file; -1 with a cause in the loader's
 * FILE:LINE:COL form. */
int cli_probe_load_verified(const char *path, struct probe **out, char **cause);

/* cmd_instrument.c: the kernel NAME means among names: an exact mangled,
 * demangled or base-name match, else the single substring match. Returns a
 * borrowed name after printing "kernel: NAME" (and the mangled name under
 * it), or NULL after printing why and the candidates (*rc 2). */
const char *cli_match_kernel(const char *want, const char **names, int n, int *rc);

/* cmd_instrument_amd.c: `ntop instrument` on AMD images. */
struct cli_amd_instrument {
	const char *image, *kernel, *out, *arch;
	const char **probes;
	int n_probes;
};
/* 1 for a code object, an offload bundle, a HIPF wrapper or a host ELF with
 * a .hip_fatbin section. */
int cli_is_amd_image(const void *img, size_t size);
int cmd_instrument_amd(const struct cli_amd_instrument *o, const void *img, size_t size);

/* cli_json.c: JSON string literal (escaped, invalid UTF-8 replaced), or
 * null for NULL. */
void cli_json_str(struct strbuf *sb, const char *s);

/* An object or array being written into sb: the helpers put the commas.
 * Output is compact (no spaces); numbers are plain decimals, and doubles
 * go out as %.6g, or null when NaN or past +-1e300. */
struct cli_json {
	struct strbuf *sb;
	int first;  /* nothing written inside yet */
	char close; /* '}' or ']' */
};

void cli_json_object(struct cli_json *j, struct strbuf *sb);
void cli_json_array(struct cli_json *j, struct strbuf *sb);
void cli_json_end(struct cli_json *j);
/* Starts a member whose value the caller writes (a nested object, say). */
void cli_json_key(struct cli_json *j, const char *key);
/* Starts an array element. */
void cli_json_item(struct cli_json *j);
/* Members: key and value. */
void cli_json_u64(struct cli_json *j, const char *key, uint64_t v);
void cli_json_int(struct cli_json *j, const char *key, long long v);
void cli_json_string(struct cli_json *j, const char *key, const char *s); /* null for NULL */
void cli_json_bool(struct cli_json *j, const char *key, int v);
void cli_json_null(struct cli_json *j, const char *key);
void cli_json_number(struct cli_json *j, const char *key, double v);
/* v, or null when !have (a value that was never measured). */
void cli_json_number_if(struct cli_json *j, const char *key, int have, double v);

/* cli_job.c: a multi-node job's rank (RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK,
 * PMI_RANK, PMIX_RANK; -1 none, *var the variable), the short host name,
 * the `record` line's host= and rank=, and -o patterns (%h host, %r rank,
 * %p pid, %% itself; -1 with *cause for %r without a rank or an unknown %). */
int cli_job_rank(const char **var);
const char *cli_job_host(char *buf, size_t n);
void cli_job_fields(struct strbuf *sb);
int cli_job_expand(const char *pattern, char **out, char **cause);

#endif
