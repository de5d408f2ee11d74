/* The log pane's lines: warnings, instrumentation failures, declined probes,
 * lost events, control acknowledgements, messages of the UI itself and (live
 * mode) the application's stdout/stderr. A ring with a fixed capacity, so a
 * chatty application cannot grow the UI without bound; `total` keeps
 * counting so the pane can say how many lines scrolled away. */
#ifndef NTOP_TUI_MSGLOG_H
#define NTOP_TUI_MSGLOG_H
#include <stdint.h>

enum msg_kind { MSG_INFO, MSG_WARN, MSG_ERROR, MSG_APP_OUT, MSG_APP_ERR };

struct msg {
	enum msg_kind kind;
	uint64_t t_ns;   /* wall clock, 0 unknown */
	char *text;      /* one line, no '\n' */
};

struct msglog {
	struct msg *ring;
	int cap, n, head; /* head: index of the oldest */
	uint64_t total;   /* lines ever added */
	uint64_t warnings; /* MSG_WARN + MSG_ERROR lines ever added */
};

struct msglog *msglog_create(int cap);
void msglog_free(struct msglog *l);
/* Adds one line (control characters shown as '?', cut at 1000 bytes). */
void msglog_add(struct msglog *l, enum msg_kind kind, uint64_t t_ns, const char *text);
void msglog_addf(struct msglog *l, enum msg_kind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* i-th line, 0 = oldest kept; NULL past the end. */
const struct msg *msglog_get(const struct msglog *l, int i);

#endif
