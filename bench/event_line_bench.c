/* Event line benchmark: what formatting a probed launch's `launch` line
 * costs, the part of it the hook does on the application's launching
 * thread after the probed kernel is queued (hook_kernel_events.c's
 * hook_launch_line: a timestamp, twelve fields, a finished malloc'd line).
 * It formats N lines the same way and prints the median ns per line of
 * several rounds; every line is parsed back and checked.
 *
 * Usage: event_line_bench [--lines N] [--rounds R] [--smoke]
 *   --smoke  a few lines, checked, no timing printed (CTest) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timeutil.h"
#include "trace/events.h"

static char *launch_line(uint64_t seq)
{
	static const unsigned grid[3] = { 65536, 1, 1 }, block[3] = { 64, 1, 1 };
	struct strbuf sb;
	strbuf_init(&sb);
	event_begin(&sb, "launch", time_wall_ns(), 12345);
	event_add_int(&sb, "kid", 7);
	event_add_int(&sb, "seq", (long long)seq);
	event_add(&sb, "api", "cuLaunchKernel");
	event_add_dim3(&sb, "grid", grid);
	event_add_dim3(&sb, "block", block);
	event_add_int(&sb, "smem", 0);
	event_add_hex(&sb, "stream", 0x55871852c920ull);
	event_add_int(&sb, "capture", 0);
	event_add_int(&sb, "probed", 1);
	event_add_int(&sb, "occ", 32);
	event_add_int(&sb, "dev", 0);
	event_add_int(&sb, "cpu_ns", (long long)(seq * 7919 % 100000));
	event_end(&sb);
	return strbuf_finish(&sb, NULL);
}

/* The line says what was put in it. */
static int line_ok(const char *line, uint64_t seq)
{
	struct event ev;
	if (!line || event_parse(line, strlen(line), &ev) < 0)
		return 0;
	int ok = strcmp(ev.type, "launch") == 0 && event_get_int(&ev, "seq", -1) == (long long)seq &&
		 event_get_int(&ev, "pid", -1) == 12345 && event_get_u64(&ev, "stream", 0) == 0x55871852c920ull &&
		 event_get_int(&ev, "cpu_ns", -1) == (long long)(seq * 7919 % 100000) &&
		 strcmp(event_get(&ev, "grid") ? event_get(&ev, "grid") : "", "65536,1,1") == 0;
	event_done(&ev);
	return ok;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long lines = 200000, rounds = 7;
	int smoke = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--smoke") == 0)
			smoke = 1;
		else if (strcmp(argv[i], "--lines") == 0 && i + 1 < argc)
			lines = atol(argv[++i]);
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atol(argv[++i]);
		else {
			fprintf(stderr, "usage: event_line_bench [--lines N] [--rounds R] [--smoke]\n");
			return 2;
		}
	}
	if (smoke) {
		lines = 1000;
		rounds = 1;
	}
	if (lines < 1 || rounds < 1 || rounds > 99) {
		fprintf(stderr, "event_line_bench: --lines and --rounds must be positive (rounds at most 99)\n");
		return 2;
	}
	uint64_t ns[99];
	for (long r = 0; r < rounds; r++) {
		uint64_t t0 = time_mono_ns();
		for (long i = 0; i < lines; i++)
			free(launch_line((uint64_t)i));
		ns[r] = time_mono_ns() - t0;
	}
	for (uint64_t seq = 0; seq < 1000; seq += 7) {
		char *line = launch_line(seq);
		if (!line_ok(line, seq)) {
			fprintf(stderr, "event_line_bench: line %llu does not parse back: %s", (unsigned long long)seq,
				line ? line : "(null)\n");
			free(line);
			return 1;
		}
		free(line);
	}
	if (smoke) {
		printf("event_line_bench: smoke ok\n");
		return 0;
	}
	qsort(ns, (size_t)rounds, sizeof ns[0], cmp_u64);
	printf("event_line_bench: %.1f ns per launch line (median of %ld rounds of %ld; fastest %.1f, slowest %.1f)\n",
	       (double)ns[rounds / 2] / (double)lines, rounds, lines, (double)ns[0] / (double)lines,
	       (double)ns[rounds - 1] / (double)lines);
	return 0;
}
