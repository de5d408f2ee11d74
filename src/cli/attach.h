/* Following a session someone (another ntop) records (`ntop attach`, and
 * `ntop view` of a running session): the UI reads the trace directory's
 * events.log as it grows and the application's output in app.log, and
 * steers the probes through the directory's control file, starting from
 * the requests already there. The viewer owns nothing: quitting it, or its
 * terminal closing, leaves the program and the recording alone, and
 * several viewers can follow one session. Only the directory's owner
 * attaches (it must be theirs and not writable by others, as ntop record
 * made it). */
#ifndef NTOP_ATTACH_H
#define NTOP_ATTACH_H
#include "tui/tui.h"

/* Runs the UI on dir with the rest of *o; the exit status for ntop. */
int attach_run(const char *dir, struct tui_opts *o);

#endif
