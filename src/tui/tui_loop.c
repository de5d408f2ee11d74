/* The UI loop (tui_run): one poll() over the terminal and the application's
 * descriptors, with a timeout that is the earliest of: the next allowed frame
 * (when something changed), the application reaping tick, the status
 * message's expiry, or zero while result summaries remain to be read in the
 * background. Event-driven frames are drawn at most TUI_FPS times a second
 * and only when something changed, so a stream of 100k events per second
 * costs parsing, not drawing; a key is answered with a frame at once. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cause.h"
#include "common/timeutil.h"
#include "tui/term.h"
#include "tui/tui.h"

#define LOOP_FRAME_NS (1000000000ull / TUI_FPS)
#define LOOP_TICK_MS 200 /* application state checks while it runs */
#define LOOP_MAX_FDS 16
#define LOOP_PROGRESS_MS 250 /* progress of a running export redrawn this often */
#define LOOP_START_MS 1000   /* the start screen's GPUs and sessions refreshed this often */

static int loop_state_changed(const struct tui_app_state *a, const struct tui_app_state *b)
{
	return a->running != b->running || a->exited != b->exited || a->signaled != b->signaled ||
	       a->pid != b->pid || a->detached != b->detached;
}

static void loop_app_state(struct tui *t)
{
	struct tui_app_state st = t->app_state;
	t->o.app->state(t->o.app->ctx, &st);
	st.detached |= t->app_state.detached;
	if (!loop_state_changed(&st, &t->app_state))
		return;
	t->app_state = st;
	t->dirty = 1;
	if (st.running || t->app_announced)
		return;
	t->app_announced = 1;
	if (st.signaled)
		tui_msg(t, 1, "the application (pid %d) was killed by signal %d (%s); q quits", st.pid, st.sig,
			strsignal(st.sig));
	else if (st.exited)
		tui_msg(t, st.status != 0, "the application (pid %d) exited with status %d; q quits", st.pid, st.status);
}

static void loop_signal(struct tui *t, int sig)
{
	if (sig == SIGINT) {
		tui_ask_quit(t);
		return;
	}
	/* SIGTERM, SIGHUP (the SSH session went away): end politely */
	if (t->o.app && t->app_state.running && !t->app_state.detached && t->o.app->kill)
		t->o.app->kill(t->o.app->ctx);
	t->quit = 1;
	t->quit_sig = sig;
}

static int loop_timeout(struct tui *t, uint64_t last_frame, int idle_work)
{
	uint64_t now = time_mono_ns();
	long ms = -1;
	if (t->dirty) {
		uint64_t next = last_frame + LOOP_FRAME_NS;
		ms = next > now ? (long)((next - now) / 1000000) + 1 : 0;
	}
	if (idle_work)
		ms = 0;
	if (t->o.app && (ms < 0 || ms > LOOP_TICK_MS))
		ms = LOOP_TICK_MS;
	if (t->o.start && (ms < 0 || ms > LOOP_START_MS))
		ms = LOOP_START_MS;
	if (t->job && (ms < 0 || ms > LOOP_PROGRESS_MS))
		ms = LOOP_PROGRESS_MS;
	if (t->status[0] && t->status_until > now) {
		long s = (long)((t->status_until - now) / 1000000) + 1;
		if (ms < 0 || s < ms)
			ms = s;
	}
	return (int)ms;
}

static void loop_keys(struct tui *t, struct cellgrid **g)
{
	int k, mx = 0, my = 0;
	while (!t->quit && (k = term_key(&mx, &my)) != -1) {
		if (k == TK_RESIZE) {
			int w, h;
			term_size(&w, &h);
			cellgrid_fit(g, w, h);
		}
		t->mouse_x = mx;
		t->mouse_y = my;
		tui_key(t, k);
	}
}

int tui_run(struct tui *t, char **cause)
{
	struct term_opts to = {t->o.no_color, t->o.no_mouse, t->o.ascii};
	struct term_info ti;
	if (term_init(&to, &ti, cause) < 0)
		return -1;
	t->utf8 = ti.utf8;
	t->mono = t->mono || ti.depth == DEPTH_NONE;
	ktable_mark(&t->kt);
	struct cellgrid *g = NULL;
	if (cellgrid_fit(&g, ti.w, ti.h) < 0) {
		term_done();
		return cause_set(cause, "out of memory");
	}
	uint64_t last_frame = 0;
	int idle_work = 1;
	t->dirty = 1;
	if (t->o.app)
		loop_app_state(t);
	while (!t->quit) {
		uint64_t now = time_mono_ns();
		if (t->dirty && now - last_frame >= LOOP_FRAME_NS) {
			tui_draw(t, g);
			term_blit(g);
			t->dirty = 0;
			last_frame = now;
			if (t->o.max_frames && (long)++t->frames >= t->o.max_frames)
				break;
			if (t->o.max_frames)
				t->dirty = 1; /* a test run: keep drawing until the limit */
		}
		struct pollfd p[LOOP_MAX_FDS];
		int n = 1;
		p[0] = (struct pollfd){STDIN_FILENO, POLLIN, 0};
		if (term_signal_fd() >= 0)
			p[n++] = (struct pollfd){term_signal_fd(), POLLIN, 0};
		if (t->job)
			p[n++] = (struct pollfd){export_job_fd(t->job), POLLIN, 0};
		int following = t->o.app && (!t->app_state.detached || t->app_state.attached);
		if (following)
			n += t->o.app->fds(t->o.app->ctx, p + n, LOOP_MAX_FDS - n);
		int r = poll(p, (nfds_t)n, loop_timeout(t, last_frame, idle_work)), err = errno;
		int sig = term_signal();
		if (sig)
			loop_signal(t, sig);
		if (r < 0 && err != EINTR)
			break;
		int keys = r > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR));
		if (r > 0 && (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) && !(p[0].revents & POLLIN))
			loop_signal(t, SIGHUP); /* the terminal is gone */
		loop_keys(t, &g); /* also after EINTR: ncurses queues KEY_RESIZE on SIGWINCH */
		if (keys)
			last_frame = 0; /* input is answered at once: the frame limit paces event-driven redraws */
		if (following) {
			if (t->o.app->pump(t->o.app->ctx, t))
				t->dirty = 1;
			loop_app_state(t);
		}
		if (t->job) /* its news, or its progress once it takes long */
			t->dirty |= tui_export_poll(t, 0) || export_job_progress_due(t->job, time_mono_ns());
		idle_work = 0;
		if (!keys && (idle_work = rcache_idle(&t->rc, t->td)) != 0) {
			ktable_mark(&t->kt);
			t->dirty = 1;
		}
		if (t->status[0] && time_mono_ns() >= t->status_until)
			t->dirty = 1;
		if (t->o.start && r == 0) /* a second without input: fresh figures */
			t->dirty = 1;
	}
	cellgrid_free(g);
	term_done();
	if (t->job && !t->quit_sig) {
		fprintf(stderr, "ntop: finishing %s\n", export_job_path(t->job));
		tui_export_poll(t, 1);
		fprintf(stderr, "ntop: %s\n", t->status);
	}
	if (t->quit_sig)
		fprintf(stderr, "ntop: %s%s\n", t->quit_sig == SIGHUP ? "the terminal hung up" : strsignal(t->quit_sig),
			t->o.app && !t->app_state.detached ? "; the application was told to terminate" : "");
	return 0;
}
