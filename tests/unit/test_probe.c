/* Probe loader: NEUTRINO's files load unmodified with the right hooks and
 * map; ntop's own schema loads probes/block_sched.toml; schema mistakes are
 * reported with file:line:col. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/probe/probe.h"
#include "testlib.h"

static struct probe *load_ok(const char *rel)
{
	struct probe *p = NULL;
	char *cause = NULL;
	int r = probe_load_file(testlib_src(rel), &p, &cause);
	CHECKF(r == 0 && p, "%s: %s", rel, cause ? cause : "(no cause)");
	free(cause);
	return r == 0 ? p : NULL;
}

static void load_err(const char *text, const char *where, const char *what)
{
	struct probe *p = NULL;
	char *cause = NULL;
	int r = probe_load_string(text, "p.toml", &p, &cause);
	CHECKF(r == -1 && p == NULL, "%s: should fail", where);
	CHECKF(cause && strncmp(cause, where, strlen(where)) == 0 && strstr(cause, what),
	       "want \"%s ...%s...\", got \"%s\"", where, what, cause ? cause : "(null)");
	free(cause);
	probe_free(p);
}

static struct probe *load_str(const char *text)
{
	struct probe *p = NULL;
	char *cause = NULL;
	int r = probe_load_string(text, "p.toml", &p, &cause);
	CHECKF(r == 0, "%s", cause ? cause : "(no cause)");
	free(cause);
	return p;
}

static void test_neutrino_block_sched(void)
{
	struct probe *p = load_ok("tests/data/neutrino_block_sched.toml");
	if (!p)
		return;
	CHECK(strcmp(p->name, "neutrino_block_sched") == 0);
	CHECK(p->analysis && strcmp(p->analysis, "block_sched") == 0);
	CHECK(p->description && strncmp(p->description, "Record start timestamp, elapsed time and smid of each warp\ncan",
					 62) == 0);
	CHECK(p->has_map);
	CHECK(strcmp(p->map.name, "block_sched") == 0);
	CHECK_EQ_INT(p->map.level, PROBE_LEVEL_WARP);
	CHECK_EQ_INT(p->map.rec_size, 16);
	CHECK_EQ_INT(p->map.cap, 1);
	CHECK_EQ_INT(p->map.n_fields, 0);
	CHECK_EQ_INT(p->n_hooks, 2);
	if (p->n_hooks == 2) {
		struct probe_hook *b = &p->hooks[0], *a = &p->hooks[1];
		CHECK(b->kind == PROBE_TP_ENTRY && a->kind == PROBE_TP_EXIT);
		CHECK(strcmp(b->name, "block_sched") == 0 && strcmp(a->name, "block_sched") == 0);
		CHECK(strncmp(b->snippet, ".reg .b64 %lstart; // local start time (unit: cycle)\n.reg", 57) == 0);
		CHECK(strstr(a->snippet, "SAVE.u32 {%elapse, %smid};") != NULL);
		CHECK_EQ_INT(b->snippet_line, 7);
		CHECK_EQ_INT(a->snippet_line, 8);
		CHECK(b->snippet_flat && a->snippet_flat);
		CHECK(b->n_opcodes == 0 && a->n_opcodes == 0);
	}
	CHECK(strstr(p->path, "tests/data/neutrino_block_sched.toml") != NULL);
	probe_free(p);
}

static void test_neutrino_gmem_bytes(void)
{
	struct probe *p = load_ok("tests/data/neutrino_gmem_bytes.toml");
	if (!p)
		return;
	CHECK(strcmp(p->name, "neutrino_gmem_bytes") == 0);
	CHECK(p->analysis == NULL); /* gmem_bytes.py is Python we do not run */
	CHECK(p->has_map && strcmp(p->map.name, "saving") == 0);
	CHECK_EQ_INT(p->map.level, PROBE_LEVEL_THREAD);
	CHECK_EQ_INT(p->map.rec_size, 8);
	CHECK_EQ_INT(p->n_hooks, 4);
	if (p->n_hooks == 4) {
		struct probe_hook *h = p->hooks;
		CHECK(h[0].kind == PROBE_TP_ENTRY && h[1].kind == PROBE_TP_EXIT);
		CHECK(strcmp(h[0].name, "saving") == 0);
		CHECK(h[2].kind == PROBE_TP_INSN && h[2].after == 0 && strcmp(h[2].name, "sync") == 0);
		CHECK(h[2].n_opcodes == 2 && strcmp(h[2].opcodes[0], "ld.global") == 0 &&
		      strcmp(h[2].opcodes[1], "st.global") == 0);
		CHECK(h[3].kind == PROBE_TP_INSN && h[3].n_opcodes == 2 && strcmp(h[3].opcodes[0], "cp.async.ca") == 0 &&
		      strcmp(h[3].opcodes[1], "cp.async.cg") == 0);
		CHECK(strcmp(h[3].snippet, "add.u32 %async_bytes, %async_bytes, IN2;") == 0);
		CHECK_EQ_INT(h[0].snippet_line, 11);
		CHECK_EQ_INT(h[1].snippet_line, 15);
		CHECK_EQ_INT(h[2].snippet_line, 19);
		CHECK_EQ_INT(h[3].snippet_line, 23);
		CHECK(!h[0].snippet_flat);
	}
	probe_free(p);
}

static void test_neutrino_after_insn(void)
{
	struct probe *p = load_str("[t]\nposition = \"mma.sync:wgmma.mma_async\"\nafter = \"mov.u32 %x, 1;\"\n");
	if (!p)
		return;
	CHECK(strcmp(p->name, "p") == 0); /* named after "p.toml" */
	CHECK(!p->has_map && p->n_hooks == 1 && p->hooks[0].kind == PROBE_TP_INSN && p->hooks[0].after == 1);
	CHECK(p->hooks[0].n_opcodes == 2 && strcmp(p->hooks[0].opcodes[1], "wgmma.mma_async") == 0);
	CHECK(p->description && p->description[0] == 0);
	probe_free(p);
	p = load_str("[t]\nposition = \"kernel\"\ndatamodel = \"thread:16:128\"\nbefore = \"\"\n");
	if (p) {
		CHECK(p->has_map && p->map.cap == 128 && p->map.rec_size == 16 && p->map.level == PROBE_LEVEL_THREAD);
		probe_free(p);
	}
}

static int has_note(const struct probe *p, const char *what)
{
	return p->notes && strstr(p->notes, what);
}

/* NEUTRINO's older layout, as its shipped files use it (tests/corpus/neutrino). */
static void test_neutrino_corpus_old(void)
{
	struct probe *p = load_ok("tests/corpus/neutrino/tensorop_count.toml");
	if (p) { /* a substring position: also wmma.mma.sync.aligned */
		const struct probe_hook *h = &p->hooks[2];
		CHECK(p->n_hooks == 3 && h->kind == PROBE_TP_INSN && h->after && h->anywhere && !h->no_pred);
		CHECK(h->n_opcodes == 1 && strcmp(h->opcodes[0], "mma.sync.aligned") == 0);
		CHECK(!p->hooks[0].anywhere && p->hooks[0].kind == PROBE_TP_ENTRY && !p->decls && !p->notes);
		probe_free(p);
	}
	p = load_ok("tests/corpus/neutrino/program_progress.toml");
	if (p) { /* no_pred, and %sample written but never declared */
		CHECK(p->n_hooks == 1 && p->hooks[0].no_pred && !p->hooks[0].after && p->map.cap == 128);
		CHECK(p->decls && strcmp(p->decls, ".reg .b64 %sample;\n") == 0);
		CHECK(has_note(p, "%sample is written but never declared: ntop declares it as the probe's own .b64"));
		probe_free(p);
	}
	p = load_ok("tests/corpus/neutrino/program_progress_init.toml");
	if (p) {
		CHECK(p->n_hooks == 2 && !p->decls && !p->notes && p->hooks[1].no_pred);
		probe_free(p);
	}
	p = load_ok("tests/corpus/neutrino/dmat.toml");
	if (p) { /* dynamic = true, datamodel thread:16:count */
		CHECK(p->has_map && p->map.cap == 64 && p->map.rec_size == 16 && p->map.level == PROBE_LEVEL_THREAD);
		CHECK(strcmp(p->map.name, "access") == 0 && has_note(p, "map access: records counted at run time"));
		CHECK(!p->analysis); /* dmat.py is a script we do not run */
		probe_free(p);
	}
	p = load_str("[s]\nposition = \"kernel:bra\"\nafter = \"mul.wide.u32 %w, %tid.x, 4;\\n"
		     "setp.eq.u32 %q, %tid.x, 0;\\ncvt.u32.u64 %n, %w;\\n{ .reg .b32 %t; mov.u32 %t, 1; }\"\n");
	if (p) { /* implicit registers typed after their writer; kernel and an opcode in one position */
		CHECK(p->decls && strstr(p->decls, ".reg .b64 %w;") && strstr(p->decls, ".reg .pred %q;") &&
		      strstr(p->decls, ".reg .b32 %n;") && !strstr(p->decls, "%t"));
		CHECK(p->n_hooks == 2 && p->hooks[0].kind == PROBE_TP_EXIT && p->hooks[1].kind == PROBE_TP_INSN);
		CHECK(p->hooks[1].after_jump_before && has_note(p, "nothing runs after 'bra'"));
		CHECK(!strchr(p->hooks[0].snippet, '{') && !strchr(p->hooks[0].snippet, '}')); /* blocks flattened */
		probe_free(p);
	}
	load_err("[s]\nposition = \"bra\"\nno_pred = 1\nbefore = \"x;\"\n", "p.toml:3:11: ",
		 "no_pred must be true or false");
	load_err("dynamic = \"yes\"\n[s]\nposition = \"kernel\"\nbefore = \"x;\"\n", "p.toml:1:11: ",
		 "dynamic must be true or false");
}

/* NEUTRINO's newer layout, as its DSL compiler writes it. */
static void test_neutrino_corpus_dsl(void)
{
	struct probe *p = load_ok("tests/corpus/neutrino/dsl_block_sched.toml");
	if (p) {
		const struct probe_map *m = &p->map;
		CHECK(p->has_map && m->level == PROBE_LEVEL_WARP && m->cap == 1 && m->rec_size == 16 && m->n_fields == 3);
		CHECK(strcmp(m->fields[2].name, "cuid") == 0 && m->fields[2].offset == 12 && m->fields[2].type == PROBE_U32);
		CHECK(p->analysis && strcmp(p->analysis, "block_sched") == 0); /* block_sched_callback.py */
		/* %NR0..%NR5 declared and zeroed by a first entry hook */
		CHECK(p->decls && strstr(p->decls, ".reg .b64 %NR<6>;\n") &&
		      strstr(p->decls, ".reg .b32 %warp_sched_u32_<3>;\n"));
		CHECK(p->n_hooks == 3 && strcmp(p->hooks[0].name, "regs") == 0 && p->hooks[0].kind == PROBE_TP_ENTRY &&
		      strstr(p->hooks[0].snippet, "mov.u64 %NR0, 0;") && strstr(p->hooks[0].snippet, "mov.u64 %NR5, 0;"));
		const char *exit = p->hooks[2].snippet;
		CHECK(p->hooks[2].kind == PROBE_TP_EXIT && strstr(exit, "cvt.u32.u64 %warp_sched_u32_1, %NR1; "
								  "cvt.u32.u64 %warp_sched_u32_2, %NR3; "
								  "SAVE.u64 {%NR0}; SAVE.u32 {%warp_sched_u32_1, "
								  "%warp_sched_u32_2};"));
		CHECKF(!strchr(exit, '[') && !strstr(exit, "\n{") && !strstr(exit, "\n}"), "exit: %s", exit);
		probe_free(p);
	}
	p = load_ok("tests/corpus/neutrino/dsl_dmat.toml");
	if (p) {
		CHECK(p->map.cap == 64 && has_note(p, "map Trace: sized at run time"));
		CHECK(p->hooks[2].kind == PROBE_TP_INSN && p->hooks[2].after && p->hooks[2].anywhere &&
		      p->hooks[2].n_opcodes == 4 && strstr(p->hooks[2].snippet, "SAVE.u64 {%NR1, ADDR};"));
		probe_free(p);
	}
	p = load_ok("tests/corpus/neutrino/dsl_program_progress.toml");
	if (p) {
		CHECK(p->decls && strstr(p->decls, ".reg .b64 %NR<1>;") && p->hooks[1].after_jump_before);
		CHECK(has_note(p, "hook branch_sample: nothing runs after 'bra'"));
		probe_free(p);
	}
	/* fields stored u64 first, as NEUTRINO's engine does */
	static const char *const MAP = "[map.M]\nlevel = \"thread\"\ntype = \"array\"\nsize = \"16\"\ncap = 2\n"
				       "[map.M.regs]\na = [\"u32\", \"None\"]\nb = [\"u64\", 0]\nc = [\"u32\", 0]\n";
	char text[1024];
	snprintf(text, sizeof text, "regs = 2\n[probe.s]\nlevel = \"thread\"\nposition = \"kernel\"\n"
		 "after = \"SAVE [ M ] { %%NR0, %%NR1, %%NR2 };\"\n%s", MAP);
	p = load_str(text);
	if (p) {
		CHECK(p->map.fields[0].type == PROBE_U64 && strcmp(p->map.fields[0].name, "b") == 0 &&
		      p->map.fields[1].offset == 8 && strcmp(p->map.fields[2].name, "c") == 0 && p->map.cap == 2);
		CHECK(has_note(p, "map M: u64 fields stored first"));
		CHECK(strstr(p->hooks[1].snippet, "cvt.u32.u64 %M_u32_1, %NR0; cvt.u32.u64 %M_u32_2, %NR2; "
						  "SAVE.u64 {%NR1}; SAVE.u32 {%M_u32_1, %M_u32_2};"));
		probe_free(p);
	}
	snprintf(text, sizeof text, "[probe.s]\nlevel = \"thread\"\npos = \"kernel\"\nafter = \"SAVE [ M ] { 1 }\"\n%s",
		 MAP);
	load_err(text, "p.toml:4:9: ", "SAVE [ M ] saves 1 values; the map has 3 fields");
	snprintf(text, sizeof text, "[probe.s]\nlevel = \"thread\"\npos = \"kernel\"\nafter = \"SAVE [ N ] { 1 }\"\n%s",
		 MAP);
	load_err(text, "p.toml:4:9: ", "SAVE [ N ]: no such map (the map is M)");
	snprintf(text, sizeof text, "[probe.s]\nlevel = \"warp\"\npos = \"kernel\"\nafter = \"x;\"\n%s", MAP);
	load_err(text, "p.toml:2:9: ", "level \"warp\" differs from map M's");
	load_err("[probe.s]\nlevel = \"thread\"\npos = \"kernel\"\nafter = \"x;\"\n[map.M]\nlevel = \"thread\"\n"
		 "type = \"array\"\nsize = 8\n[map.M.regs]\na = [\"u32\", 0]\n", "p.toml:9:1: ",
		 "1 u32 fields: NEUTRINO stores u32 values in pairs");
	load_err("[probe.s]\nlevel = \"thread\"\npos = \"kernel\"\nafter = \"x;\"\n[map.M]\nlevel = \"thread\"\n"
		 "type = \"array\"\nsize = 4\n[map.M.regs]\na = [\"u64\", 0]\n", "p.toml:8:8: ",
		 "size 4 is smaller than the fields (8 bytes)");
	load_err("[probe.s]\nlevel = \"thread\"\npos = \"kernel\"\nafter = \"x;\"\n[map.M]\nlevel = \"thread\"\n"
		 "type = \"hash\"\nsize = 8\n", "p.toml:7:8: ", "type must be \"array\"");
	load_err("[probe.s]\nlevel = \"block\"\npos = \"kernel\"\nafter = \"x;\"\n", "p.toml:2:9: ",
		 "level must be \"warp\" or \"thread\"");
	load_err("regs = 2\n[probe.s]\nlevel = \"thread\"\nafter = \"x;\"\n", "p.toml:2:1: ", "needs pos");
	load_err("regs = 2\n", "p.toml:1:1: ", "no probes");
	load_err("regs = 2\nkeys = 1\n", "p.toml:2:1: ", "unknown key 'keys'");
}

/* A block map with folded fields (tests/gpu/block_span.toml). */
static void test_ntop_block_span(void)
{
	struct probe *p = load_ok("tests/gpu/block_span.toml");
	if (!p)
		return;
	CHECK(strcmp(p->name, "block_span") == 0);
	CHECK(p->has_map && p->map.level == PROBE_LEVEL_BLOCK);
	CHECK_EQ_INT(p->map.cap, 1);
	CHECK_EQ_INT(p->map.rec_size, 40);
	CHECK_EQ_INT(p->map.n_fields, 6);
	if (p->map.n_fields == 6) {
		static const char *const names[] = { "first", "start", "gstart", "end", "smid", "pad" };
		static const int offs[] = { 0, 8, 16, 24, 32, 36 }, types[] = { 8, 8, 8, 8, 4, 4 };
		for (int i = 0; i < 6; i++) {
			CHECK(strcmp(p->map.fields[i].name, names[i]) == 0);
			CHECK_EQ_INT(p->map.fields[i].offset, offs[i]);
			CHECK_EQ_INT(p->map.fields[i].type, types[i]);
			CHECK_EQ_INT(p->map.fields[i].fold, i == 0 || i == 3 ? PROBE_FOLD_MAX : PROBE_FOLD_NONE);
		}
	}
	CHECK(p->n_hooks == 2 && p->hooks[0].kind == PROBE_TP_ENTRY && p->hooks[1].kind == PROBE_TP_EXIT);
	probe_free(p);
}

static void test_ntop_block_sched(void)
{
	struct probe *p = load_ok("probes/block_sched.toml");
	if (!p)
		return;
	CHECK(strcmp(p->name, "block_sched") == 0);
	CHECK(p->analysis && strcmp(p->analysis, "block_sched") == 0);
	CHECK(p->description && strncmp(p->description, "When each warp started", 22) == 0 &&
	      !strchr(p->description, '\n'));
	CHECK(p->has_map && strcmp(p->map.name, "block_sched") == 0 && p->map.level == PROBE_LEVEL_WARP);
	CHECK_EQ_INT(p->map.cap, 1);
	CHECK_EQ_INT(p->map.rec_size, 24);
	CHECK_EQ_INT(p->map.n_fields, 4);
	if (p->map.n_fields == 4) {
		static const char *const names[] = { "start", "gstart", "elapsed", "smid" };
		static const int offs[] = { 0, 8, 16, 20 }, types[] = { 8, 8, 4, 4 };
		for (int i = 0; i < 4; i++) {
			CHECK(strcmp(p->map.fields[i].name, names[i]) == 0);
			CHECK_EQ_INT(p->map.fields[i].offset, offs[i]);
			CHECK_EQ_INT(p->map.fields[i].type, types[i]);
		}
	}
	CHECK_EQ_INT(p->n_hooks, 2);
	if (p->n_hooks == 2) {
		CHECK(p->hooks[0].kind == PROBE_TP_ENTRY && p->hooks[1].kind == PROBE_TP_EXIT);
		CHECK(strcmp(p->hooks[0].name, "hook1") == 0 && strcmp(p->hooks[1].name, "hook2") == 0);
		CHECK_EQ_INT(p->hooks[0].snippet_line, 24);
		CHECK_EQ_INT(p->hooks[1].snippet_line, 33);
		CHECK(!p->hooks[0].snippet_flat);
		CHECK(strncmp(p->hooks[0].snippet, ".reg .b64 %bs_start;\n", 21) == 0);
	}
	probe_free(p);
}

#define NTOP_HEAD "ntop_probe = 1\nname = \"t\"\n"
#define HOOK_ENTRY "[[hook]]\nat = \"entry\"\nasm = \"mov.u32 %x, 1;\"\n"

static void test_ntop_opcode_hooks(void)
{
	struct probe *p = load_str(NTOP_HEAD "[[hook]]\nat = [\"ld.global\", \"st.shared::cta\"]\nwhen = \"after\"\n"
				   "asm = '''\nmov.u32 %x, 1;'''\n" HOOK_ENTRY);
	if (!p)
		return;
	CHECK(!p->has_map && p->n_hooks == 2);
	CHECK(p->hooks[0].kind == PROBE_TP_INSN && p->hooks[0].after == 1 && p->hooks[0].n_opcodes == 2);
	CHECK(strcmp(p->hooks[0].opcodes[1], "st.shared::cta") == 0);
	CHECK_EQ_INT(p->hooks[0].snippet_line, 7);
	CHECK(p->analysis == NULL && p->description[0] == 0);
	probe_free(p);
}

static void test_ntop_errors(void)
{
	load_err(NTOP_HEAD "descripton = \"x\"\n" HOOK_ENTRY, "p.toml:3:1: ",
		 "unknown key 'descripton' in an ntop probe (did you mean 'description'?)");
	load_err(NTOP_HEAD "colour = 1\n" HOOK_ENTRY, "p.toml:3:1: ", "unknown key 'colour' in an ntop probe (known keys: "
		 "ntop_probe, name, description, analysis, isa, map, hook, regions)");
	load_err("ntop_probe = 2\nname = \"t\"\n", "p.toml:1:14: ", "ntop_probe must be 1");
	load_err("ntop_probe = 1\n" HOOK_ENTRY, "p.toml:1:1: ", "missing key 'name'");
	load_err("ntop_probe = 1\nname = \"a-b\"\n" HOOK_ENTRY, "p.toml:2:8: ", "name must be an identifier");
	load_err("ntop_probe = 1\nname = 5\n", "p.toml:2:8: ", "'name' must be a string, not an integer");
	load_err(NTOP_HEAD "analysis = \"block sched\"\n" HOOK_ENTRY, "p.toml:3:12: ", "built-in analysis");
	load_err(NTOP_HEAD, "p.toml:1:1: ", "no hooks");
	load_err(NTOP_HEAD "[hook]\nat = \"entry\"\nasm = \"x;\"\n", "p.toml:3:2: ", "write each as [[hook]]");
	/* [map] */
	load_err(NTOP_HEAD "[map]\nlevel = \"warp\"\nfields = [\"a:u32\"]\nlvl = 1\n" HOOK_ENTRY, "p.toml:6:1: ",
		 "unknown key 'lvl' in [map] (did you mean 'level'?)");
	load_err(NTOP_HEAD "[map]\nlevel = \"grid\"\nfields = [\"a:u32\"]\n" HOOK_ENTRY, "p.toml:4:9: ",
		 "level must be \"warp\", \"thread\" or \"block\"");
	load_err(NTOP_HEAD "[map]\nlevel = \"warp\"\nfields = [\"a:u64:max\"]\n" HOOK_ENTRY, "p.toml:5:11: ",
		 "field \"a:u64:max\" folds warps' values (:max), which only a level = \"block\" map does");
	load_err(NTOP_HEAD "[map]\nlevel = \"block\"\nfields = [\"a:u64:min\"]\n" HOOK_ENTRY, "p.toml:5:11: ",
		 "'min' is not a fold; a block map's field may end in :max or :add");
	load_err(NTOP_HEAD "isa = \"gcn\"\n[map]\nlevel = \"block\"\nfields = [\"a:u64\"]\n" HOOK_ENTRY, "p.toml:5:9: ",
		 "level = \"block\" is not supported for AMD probes");
	load_err(NTOP_HEAD "[map]\nlevel = \"warp\"\ncap = 0\nfields = [\"a:u32\"]\n" HOOK_ENTRY, "p.toml:5:7: ",
		 "cap must be an integer from 1");
	load_err(NTOP_HEAD "[map]\nlevel = \"warp\"\n" HOOK_ENTRY, "p.toml:3:1: ", "[map] needs fields");
	load_err(NTOP_HEAD "[map]\nlevel = \"warp\"\nfields = [\"a:u32\", \"b:f32\"]\n" HOOK_ENTRY, "p.toml:5:20: ",
		 "field 'b' has type 'f32'; fields are u32 or u64");
	load_err(NTOP_HEAD "[map]\nlevel = \"warp\"\nfields = [\"a:u32\", \"a:u32\"]\n" HOOK_ENTRY, "p.toml:5:20: ",
		 "field 'a' is listed twice");
	load_err(NTOP_HEAD "[map]\nlevel = \"warp\"\nfields = [\"a\"]\n" HOOK_ENTRY, "p.toml:5:11: ",
		 "must read \"name:u32\"");
	load_err(NTOP_HEAD "[map]\nlevel = \"warp\"\nfields = []\n" HOOK_ENTRY, "p.toml:5:10: ", "1 to 16 fields");
	load_err(NTOP_HEAD "[map]\nlevel = \"warp\"\nfields = [\n  \"elapsed:u32\",\n  \"start:u64\",\n  \"smid:u32\",\n]\n"
		 HOOK_ENTRY, "p.toml:7:3: ",
		 "field 'start' (u64) would start at byte 4 of the record; u64 fields must sit at 8-byte-aligned "
		 "offsets: list them first, e.g. fields = [\"start:u64\", \"elapsed:u32\", \"smid:u32\"]");
	load_err(NTOP_HEAD "[map]\nlevel = \"warp\"\nfields = [\"start:u64\", \"smid:u32\"]\n" HOOK_ENTRY, "p.toml:5:10: ",
		 "the record is 12 bytes");
	load_err(NTOP_HEAD "map = 3\n" HOOK_ENTRY, "p.toml:3:7: ", "map must be a table");
	/* [[hook]] */
	load_err(NTOP_HEAD "[[hook]]\nat = \"entry\"\nwhen = \"before\"\nasm = \"x;\"\n", "p.toml:5:1: ",
		 "'when' applies to opcode and region hooks only");
	load_err(NTOP_HEAD "[[hook]]\nat = [\"ld.global\"]\nasm = \"x;\"\n", "p.toml:3:1: ",
		 "an opcode hook needs when = \"before\" or \"after\"");
	load_err(NTOP_HEAD "[[hook]]\nat = [\"ld.global\"]\nwhen = \"during\"\nasm = \"x;\"\n", "p.toml:5:8: ",
		 "when must be \"before\" or \"after\"");
	load_err(NTOP_HEAD "[[hook]]\nat = \"ld.global\"\nasm = \"x;\"\n", "p.toml:4:6: ",
		 "at must be \"entry\", \"exit\", \"region\" or a list of opcodes");
	load_err(NTOP_HEAD "[[hook]]\nat = []\nasm = \"x;\"\n", "p.toml:4:6: ", "at must be");
	load_err(NTOP_HEAD "[[hook]]\nat = [\"ld..global\"]\nwhen = \"before\"\nasm = \"x;\"\n", "p.toml:4:7: ",
		 "opcodes are dotted PTX opcode prefixes");
	load_err(NTOP_HEAD "[[hook]]\nat = \"exit\"\n", "p.toml:3:1: ", "missing key 'asm'");
	load_err(NTOP_HEAD "[[hook]]\nasm = \"x;\"\n", "p.toml:3:1: ", "missing key 'at'");
	load_err(NTOP_HEAD "[[hook]]\nat = \"exit\"\nasm = \"\"\"\n  \n\"\"\"\n", "p.toml:5:7: ", "asm is empty");
	load_err(NTOP_HEAD "[[hook]]\nat = \"exit\"\nasm = \"x;\"\nwehn = 1\n", "p.toml:6:1: ",
		 "unknown key 'wehn' in [[hook]] (did you mean 'when'?)");
	/* TOML errors come through with their position */
	load_err(NTOP_HEAD "name = \"u\"\n", "p.toml:3:1: ", "duplicate key 'name'");
}

/* Regions: "NAME=SPEC" in regions = [...], hooks at = "region" with
 * when = "begin" | "end", and each without the other refused. */
static void test_ntop_regions(void)
{
	struct probe *p = NULL;
	char *cause = NULL;
	CHECKF(probe_load_file(testlib_src("probes/regions.toml"), &p, &cause) == 0, "%s", cause ? cause : "");
	if (p) {
		CHECK_EQ_INT(p->n_regions, 5);
		CHECK(p->regions[0].kind == PROBE_REGION_CLASS && p->regions[0].cls == PROBE_CLASS_TENSOR);
		CHECK(!strcmp(p->regions[1].name, "wait") && !strcmp(p->regions[1].spec, "@wait"));
		int begin = 0, end = 0;
		for (int i = 0; i < p->n_hooks; i++) {
			begin += p->hooks[i].kind == PROBE_TP_REGION && !p->hooks[i].after;
			end += p->hooks[i].kind == PROBE_TP_REGION && p->hooks[i].after;
		}
		CHECK(begin == 1 && end == 1);
		const char *specs[] = { "load=attn.py:40-55", "it=@loop:a/b.cu:7", "one=k.cu:3" };
		CHECKF(probe_set_regions(p, specs, 3, &cause) == 0, "%s", cause ? cause : "");
		CHECK(p->regions[0].kind == PROBE_REGION_LINES && !strcmp(p->regions[0].file, "attn.py") &&
		      p->regions[0].first == 40 && p->regions[0].last == 55);
		CHECK(p->regions[1].kind == PROBE_REGION_LOOP && !strcmp(p->regions[1].file, "a/b.cu") &&
		      p->regions[1].first == 7);
		CHECK(p->regions[2].first == 3 && p->regions[2].last == 3);
		const char *twice[] = { "a=@load", "a=@store" };
		CHECK(probe_set_regions(p, twice, 2, &cause) < 0 && strstr(cause, "named twice"));
		free(cause);
		cause = NULL;
	}
	probe_free(p);
	struct probe_region r;
	char why[512];
	static const char *const bad[][2] = {
		{ "noequals", "is not NAME=SPEC" },      { "1x=@load", "identifier" },
		{ "a=@loads", "no instruction class" },  { "a=f.cu:0", "numbers from 1" },
		{ "a=f.cu:9-3", "ends before it starts" }, { "a=f.cu", "is not FILE:LINE" },
		{ "a=@loop:f.cu:3-4", "one line inside it" }, { "a=f.cu:x", "numbers from 1" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECKF(probe_region_parse(bad[i][0], &r, why, sizeof why) < 0 && strstr(why, bad[i][1]), "%s: %s",
		       bad[i][0], why);
#define REGION_HOOK "[[hook]]\nat = \"region\"\nwhen = \"begin\"\nasm = \"mov.u32 %x, REGION;\"\n"
	load_err(NTOP_HEAD REGION_HOOK, "p.toml:1:1: ", "need regions");
	load_err(NTOP_HEAD "regions = [\"a=@load\"]\n" HOOK_ENTRY, "p.toml:3:11: ", "this probe has none");
	load_err(NTOP_HEAD "regions = [\"a=@lod\"]\n" REGION_HOOK, "p.toml:3:12: ", "no instruction class");
	load_err(NTOP_HEAD "regions = \"a=@load\"\n" REGION_HOOK, "p.toml:3:11: ", "list of \"NAME=SPEC\"");
	load_err(NTOP_HEAD "regions = [\"a=@load\"]\n[[hook]]\nat = \"region\"\nasm = \"mov.u32 %x, 1;\"\n",
		 "p.toml:4:1: ", "when = \"begin\" or \"end\"");
	load_err(NTOP_HEAD "regions = [\"a=@load\"]\n[[hook]]\nat = \"region\"\nwhen = \"before\"\nasm = \"x\"\n",
		 "p.toml:6:8: ", "when = \"begin\" or \"end\"");
#undef REGION_HOOK
}

static void test_neutrino_errors(void)
{
	load_err("[s]\npostion = \"kernel\"\nbefore = \"x;\"\n", "p.toml:2:1: ",
		 "unknown key 'postion' in a NEUTRINO probe section (did you mean 'position'?)");
	load_err("autor = \"me\"\n[s]\nposition = \"kernel\"\nbefore = \"x;\"\n", "p.toml:1:1: ",
		 "unknown key 'autor' in a NEUTRINO probe (probe sections are [tables]) (did you mean 'author'?)");
	load_err("[s]\nposition = \"kernel\"\ndatamodel = \"block:16\"\nbefore = \"x;\"\n", "p.toml:3:13: ",
		 "datamodel must read");
	load_err("[s]\nposition = \"kernel\"\ndatamodel = \"warp:0\"\nbefore = \"x;\"\n", "p.toml:3:13: ",
		 "datamodel must read");
	load_err("[s]\nposition = \"kernel\"\ndatamodel = \"warp:6\"\nbefore = \"x;\"\n", "p.toml:3:13: ",
		 "not a multiple of 4");
	load_err("[s]\nposition = \"kernel\"\ndatamodel = \"warp:8:x\"\nbefore = \"x;\"\n", "p.toml:3:13: ",
		 "datamodel must read");
	load_err("[s]\nposition = \"kernel\"\n", "p.toml:1:1: ", "section [s] has neither 'before' nor 'after'");
	load_err("[s]\nbefore = \"x;\"\n", "p.toml:1:1: ", "missing key 'position'");
	load_err("[s]\nposition = \"ld.global::st.global\"\nbefore = \"x;\"\n", "p.toml:2:12: ",
		 "position must be \"kernel\" or opcodes joined by ':'");
	load_err("[s]\nposition = \"ld.global:\"\nbefore = \"x;\"\n", "p.toml:2:12: ", "ends with ':'");
	load_err("[s]\nposition = \"\"\nbefore = \"x;\"\n", "p.toml:2:12: ", "position is empty");
	load_err("[a]\nposition = \"kernel\"\ndatamodel = \"warp:8\"\nbefore = \"x;\"\n"
		 "[b]\nposition = \"kernel\"\ndatamodel = \"warp:8\"\nbefore = \"x;\"\n",
		 "p.toml:7:13: ", "one map per probe ([a] has one)");
	load_err("[\"a b\"]\nposition = \"kernel\"\nbefore = \"x;\"\n", "p.toml:1:2: ", "must be an identifier");
	load_err("author = \"x\"\n", "p.toml:1:1: ", "no probe sections");
	load_err("[[s]]\nposition = \"kernel\"\n", "p.toml:1:3: ", "plain [tables]");
	load_err("[s]\nposition = \"kernel\"\nbefore = 1\n", "p.toml:3:10: ", "'before' must be a string");
}

static void test_files(void)
{
	struct probe *p = NULL;
	char *cause = NULL;
	CHECK(probe_load_file("/nonexistent/x.toml", &p, &cause) == -1 && p == NULL);
	CHECK(cause && strstr(cause, "/nonexistent/x.toml: cannot open"));
	CHECK(probe_load_file(testlib_src("tests/data"), &p, &cause) == -1);
	CHECK(cause && strstr(cause, "not a regular file"));

	char path[] = "/tmp/ntop_probe_big_XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd >= 0) {
		static char chunk[1 << 16];
		memset(chunk, '#', sizeof chunk);
		for (unsigned i = 0; i <= PROBE_FILE_MAX / sizeof chunk; i++)
			CHECK(write(fd, chunk, sizeof chunk) == (ssize_t)sizeof chunk);
		close(fd);
		CHECK(probe_load_file(path, &p, &cause) == -1);
		CHECK(cause && strstr(cause, "too big for a probe file"));
		unlink(path);
	}
	/* a TOML error in a file names that file */
	char path2[] = "/tmp/ntop_probe_bad_XXXXXX";
	fd = mkstemp(path2);
	if (fd >= 0) {
		const char *t = "ntop_probe = 1\nname = \"x\nx\"\n";
		CHECK(write(fd, t, strlen(t)) == (ssize_t)strlen(t));
		close(fd);
		CHECK(probe_load_file(path2, &p, &cause) == -1);
		char want[128];
		snprintf(want, sizeof want, "%s:2:10: newline in a one-line string", path2);
		CHECKF(cause && strncmp(cause, want, strlen(want)) == 0, "got %s", cause);
		unlink(path2);
	}
	free(cause);
}

int main(void)
{
	test_neutrino_block_sched();
	test_neutrino_gmem_bytes();
	test_neutrino_after_insn();
	test_neutrino_corpus_old();
	test_neutrino_corpus_dsl();
	test_ntop_block_sched();
	test_ntop_block_span();
	test_ntop_opcode_hooks();
	test_ntop_errors();
	test_ntop_regions();
	test_neutrino_errors();
	test_files();
	return testlib_report();
}
