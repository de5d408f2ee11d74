#ifndef NTOP_HOOK_SELFTIME_H
#define NTOP_HOOK_SELFTIME_H
/* The hook's own time on the app's thread, launch by launch, split by what
 * it did (NTOP_SELF_TIME=1; off, every call here is one branch). On a GPU
 * an app that waits for each launch feels every microsecond of it; these
 * say which part that was, and the driver's own launch call beside it. */
#include <stdint.h>

enum hook_self_phase {
	HOOK_SELF_U_LOOKUP, /* unprobed: entry to the kernel found and counted, its device known */
	HOOK_SELF_U_SELECT, /* unprobed: timing sampled? probed? configuration changed? */
	HOOK_SELF_U_PRE,    /* unprobed: the timing's start event when sampled, to the driver's call */
	HOOK_SELF_U_DRV,    /* unprobed: the driver's launch call */
	HOOK_SELF_U_POST,   /* unprobed: after it, to the return */
	HOOK_SELF_P_FIND,   /* probed: entry to the probe chosen (the kernel found and counted, selection) */
	HOOK_SELF_P_PREP,   /* probed: to a job ready (copy, plan, buffer) */
	HOOK_SELF_P_ENQ,    /* probed: waits, globals, start event before the kernel */
	HOOK_SELF_P_DRV,    /* probed: the driver's launch call */
	HOOK_SELF_P_END,    /* probed: the end event and globals after the kernel */
	HOOK_SELF_P_EMIT,   /* probed: the launch line and counts */
	HOOK_SELF_P_SUBMIT, /* probed: handing the job to the collector, to the return */
	HOOK_SELF_PHASES
};

/* The latest samples of each phase, for medians: a mean moves with one
 * launch held for milliseconds, a median does not. */
#define HOOK_SELF_RING 512
struct hook_self_ring {
	uint64_t n[HOOK_SELF_PHASES];                   /* samples taken (atomic) */
	uint32_t ns[HOOK_SELF_PHASES][HOOK_SELF_RING];  /* the latest, slot n % HOOK_SELF_RING */
};

struct hook_self {
	uint64_t ns[HOOK_SELF_PHASES]; /* atomic sums */
	uint64_t unprobed, probed;     /* atomic counts */
	uint64_t timed;                /* unprobed launches sampled for timing (atomic) */
	struct hook_self_ring *ring;   /* made at the first sample (atomic) */
};

struct hook_kernel;

/* time_mono_ns() when NTOP_SELF_TIME=1, else 0. */
uint64_t hook_self_now(void);
/* Makes k's ring of samples at its first launch (not timed), so that no
 * timed phase holds its allocation and first page faults (about 50 us). */
void hook_self_ready(struct hook_kernel *k);
/* Adds t1 - t0 to k's phase p (nothing when either is 0). */
void hook_self_add(struct hook_kernel *k, enum hook_self_phase p, uint64_t t0, uint64_t t1);
void hook_self_count(struct hook_kernel *k, int probed, int timed);
/* At exit: a `self` line per kernel launched, the mean and the median ns
 * per phase and what one clock read costs here (the phases include that
 * much). */
void hook_self_lines(void);

#endif
