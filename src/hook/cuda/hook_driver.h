/* Finding and opening the real driver. Never ourselves: a candidate that is
 * our own file (same device and inode) is skipped, and an opened library that
 * exports ntop_hook_marker (a copy of the hook) is closed and rejected. */
#ifndef NTOP_HOOK_DRIVER_H
#define NTOP_HOOK_DRIVER_H

/* Sets hook.real and hook.real_path; on failure -1 with the reasons tried. */
int hook_driver_open(char **cause);

#endif
