/* The hook's debug log: only to the file NTOP_LOG names, never to the
 * application's stdout/stderr. */
#ifndef NTOP_HOOK_LOG_H
#define NTOP_HOOK_LOG_H

void hook_log_open(void);
void hook_logf(const char *func, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define hook_log(...) hook_logf(__func__, __VA_ARGS__)

#endif
