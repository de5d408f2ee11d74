/* Exporting what the timeline or heatmap view shows to a PNG:
 * <name>-k<kid>-p<pid>-<seq>-timeline.png (or -dmat.png) in the directory
 * export_dir picks. Kernel names never go into a path as they are
 * (templates hold '<', '>', ' ', '/', and a name can be kilobytes):
 * export_safe_name keeps [A-Za-z0-9_.-], squeezes the rest to '_' and cuts
 * it short; the kid and pid keep names unique. */
#ifndef NTOP_TUI_EXPORT_H
#define NTOP_TUI_EXPORT_H
#include <stddef.h>

#include "trace/result.h"
#include "trace/trace_dir.h"
#include "viz/dmat.h"
#include "viz/theme.h"
#include "viz/timeline.h"

#define EXPORT_NAME_MAX 48

/* A file-name-safe form of a kernel name (demangled base name preferred). */
void export_safe_name(const char *mangled, char *buf, size_t len);
/* Where the UI writes: DIR/export/ when the trace directory DIR is the
 * user's own and DIR/export can be made and written; else the current
 * directory when writable; else $XDG_STATE_HOME/ntop/export (default
 * ~/.local/state/ntop/export). A trace may be read-only, someone else's, or
 * a bundled example. Returns the directory (malloc'd) and in *note why DIR
 * was passed over (malloc'd, NULL when it was not); NULL with a cause when
 * none of them can be written. */
char *export_dir(const char *trace_dir, char **note, char **cause);
/* path as the status line shows it: relative to cwd when under it ("./"),
 * else "~/" for under home, else as it is (cwd, home may be NULL). */
void export_path_short(const char *path, const char *cwd, const char *home, char *buf, size_t len);
/* The PNG path for a launch in dir (malloc'd). */
char *export_timeline_path(const char *dir, const struct td_kernel *k, uint64_t seq);
/* Draws v of tl (RP_DEFAULT size) and writes it to path. */
int export_timeline(const struct trace_dir *td, const struct td_kernel *k, const struct result *r,
		    const struct timeline *tl, const struct tl_view *v, enum tl_color color, const struct theme *th,
		    const char *path, char **cause);
/* The DMAT PNG path for a launch in dir (malloc'd): ...-<seq>-dmat.png. */
char *export_dmat_path(const char *dir, const struct td_kernel *k, uint64_t seq);
/* Draws v of m (RDP_DEFAULT size) and writes it to path. */
int export_dmat(const struct trace_dir *td, const struct td_kernel *k, const struct result *r, const struct dmat *m,
		const struct dmat_view *v, const struct theme *th, const char *path, char **cause);

#endif
