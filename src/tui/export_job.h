/* An export written by a child process, so that a long one (a big DMAT
 * re-read from its result file, a large image) never freezes the UI: fork()
 * gives the child a snapshot of the model and the view as they were when
 * the user pressed `e`, so the parent may zoom, close the view or free the
 * model meanwhile. The child never touches the terminal (its stdin, stdout
 * and stderr are /dev/null, its other descriptors closed); it reports its
 * stage and any error over a pipe, which the UI loop polls with its other
 * descriptors, and ends with _exit (no atexit handlers: they belong to the
 * UI). The bytes written so far are read from the image's temporary file
 * (png_canvas_write writes PATH.tmpXXXXXX, then renames it). */
#ifndef NTOP_TUI_EXPORT_JOB_H
#define NTOP_TUI_EXPORT_JOB_H
#include <stddef.h>
#include <stdint.h>

#define EXPORT_JOB_QUIET_NS 1000000000ull /* progress is shown after this long */

struct export_job;

/* Runs in the child: writes the file at the job's path; -1 with a cause. */
typedef int (*export_job_fn)(void *arg, char **cause);

/* Starts fn(arg) in a child that writes `path`; -1 with a cause (fork or
 * pipe failed: nothing was started). */
int export_job_start(struct export_job **out, const char *path, export_job_fn fn, void *arg, char **cause);
/* In the child: the stage it is in ("drawing", "writing"), for progress. */
void export_job_stage(const char *stage);
/* The descriptor to poll for reading while the job runs. */
int export_job_fd(const struct export_job *j);
const char *export_job_path(const struct export_job *j);
/* Reads what the child said without blocking (block: until it ends).
 * Returns 1 once the child has ended, then *failed says whether the file
 * was written and *cause (malloc'd, may be NULL) why not; 0 while it runs. */
int export_job_poll(struct export_job *j, int block, int *failed, char **cause);
/* "writing NAME: drawing, 3 s" or "writing NAME: 1.2 MiB, 4 s"; "" during
 * the first EXPORT_JOB_QUIET_NS (a quick write shows only its result). */
void export_job_progress(const struct export_job *j, uint64_t now_ns, char *buf, size_t len);
/* Whether the progress line shows by now (the job runs longer than
 * EXPORT_JOB_QUIET_NS). */
int export_job_progress_due(const struct export_job *j, uint64_t now_ns);
/* Frees a finished job; a running one is left to finish on its own. */
void export_job_free(struct export_job *j);

#endif
