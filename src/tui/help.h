/* The help screen's text: every key of every view, one table, so the help
 * view and the unit test (everything fits at 80 columns) read the same. */
#ifndef NTOP_TUI_HELP_H
#define NTOP_TUI_HELP_H
#include "tui/layout.h"

extern const struct layout_help_item help_items[];
extern const int help_n_items;

#endif
