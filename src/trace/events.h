/* The hook's event stream: one text line per event, sent by the hook to the
 * launcher's socket (NTOP_EVENT_SOCK, one message per line) and stored as
 * events.log in the trace. A line is "TYPE key=value key=value ...\n";
 * values are percent-encoded (%XX for '%', bytes <= 0x20, 0x7f and above),
 * keys are [a-z_0-9]. Every line starts with t=<wall ns> pid=<pid>. Readers
 * ignore unknown keys and types, so fields can be added without a version
 * bump. Types and keys: doc/trace-format.md. */
#ifndef NTOP_EVENTS_H
#define NTOP_EVENTS_H
#include <stddef.h>
#include <stdint.h>
#include "common/strbuf.h"

#define EVENT_MAX_FIELDS 48
#define EVENT_LINE_MAX 4096 /* one message, or one write() (<= PIPE_BUF) to a file or pipe */

struct event {
	char type[24];
	int n;
	char *key[EVENT_MAX_FIELDS]; /* point into the parsed line's storage */
	char *val[EVENT_MAX_FIELDS]; /* decoded, NUL-terminated */
	char *storage;
};

/* Parses one line (without or with its '\n'). Returns -1 on a malformed line. */
int event_parse(const char *line, size_t len, struct event *ev);
void event_done(struct event *ev);
const char *event_get(const struct event *ev, const char *key);
/* Integer value of key (decimal or 0x hex); `def` when absent or malformed. */
long long event_get_int(const struct event *ev, const char *key, long long def);
/* Unsigned 64-bit value of key (decimal or 0x hex); `def` when absent/malformed. */
uint64_t event_get_u64(const struct event *ev, const char *key, uint64_t def);

/* Builds a line: event_begin(sb, "launch", t, pid) then event_add*(...) then
 * event_end(sb) appends '\n'. Values are encoded here. */
void event_begin(struct strbuf *sb, const char *type, uint64_t t_ns, int pid);
void event_add(struct strbuf *sb, const char *key, const char *val);
void event_addf(struct strbuf *sb, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void event_add_int(struct strbuf *sb, const char *key, long long v);
void event_add_hex(struct strbuf *sb, const char *key, unsigned long long v);     /* 0x... */
void event_add_dim3(struct strbuf *sb, const char *key, const unsigned v[3]);     /* x,y,z */
void event_end(struct strbuf *sb);

#endif
