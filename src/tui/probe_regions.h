/* The probe picker's regions page (probe_regions.c): regions chosen from
 * the kernel's own source lines, listed from its PTX (which the program
 * saves on request: tui_request_source), by instruction class and by loop. */
#ifndef NTOP_TUI_PROBE_REGIONS_H
#define NTOP_TUI_PROBE_REGIONS_H
#include "viz/cellgrid.h"

struct tui;
struct pregions;

enum { PREG_STAY, PREG_BACK, PREG_APPLY };

/* For kernel (pid, kid); asks the program for its PTX when the trace has
 * none yet. NULL when out of memory. */
struct pregions *pregions_open(struct tui *t, unsigned pid, unsigned kid);
void pregions_free(struct pregions *r);
/* PREG_STAY (redraw), PREG_BACK (to the probe list) or PREG_APPLY. */
int pregions_key(struct pregions *r, struct tui *t, int key);
void pregions_draw(struct pregions *r, struct tui *t, struct cellgrid *g, int x, int y, int w, int h);
/* The regions chosen, "NAME=SPEC" each (borrowed). */
const char *const *pregions_specs(const struct pregions *r, int *n);

#endif
