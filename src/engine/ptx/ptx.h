/* PTX module model (PTX ISA 8.x/9.x as emitted by nvcc 12-13, Triton and
 * Numba). The parser keeps each statement's original text, so emitting an
 * untouched module reproduces it; instructions are additionally split into
 * guard predicate, opcode and operands for tracepoint matching and helper
 * substitution. Comments are dropped. Owned by ptx_parse.c / ptx_emit.c /
 * ptx_prune.c; struct contents are public so the instrumenter can edit them. */
#ifndef NTOP_PTX_H
#define NTOP_PTX_H
#include <stddef.h>

enum ptx_stmt_kind {
	PTX_INSN,      /* an instruction, ends with ';' */
	PTX_LABEL,     /* "name:" */
	PTX_DIRECTIVE, /* .reg/.local/.shared/.param/.pragma/.loc/... inside a body */
	PTX_OPEN,      /* "{" opening a nested scope */
	PTX_CLOSE,     /* "}" closing a nested scope */
};

struct ptx_operand {
	char *text;  /* as written, whitespace-trimmed: "%r1", "[%rd2+8]", "{%f1, %f2}", "0f3F800000" */
	int is_addr; /* [ ... ] */
	int is_vec;  /* { ... } */
};

struct ptx_insn {
	char *pred;   /* guard without '@': "%p1", "!%p1"; NULL when unguarded */
	char *opcode; /* full dotted opcode: "ld.global.nc.v4.f32" */
	int n_ops;
	struct ptx_operand *ops; /* in written order; call's "(a, b)" lists stay one operand each */
};

struct ptx_stmt {
	enum ptx_stmt_kind kind;
	int line;   /* 1-based line in the parsed text */
	char *text; /* whole statement as written (for PTX_INSN including ';') */
	struct ptx_insn insn; /* PTX_INSN only */
};

struct ptx_func {
	char *name;
	int is_entry;  /* .entry (kernel) vs .func */
	int is_decl;   /* prototype only, no body (e.g. .extern .func) */
	int line;
	char *prefix;  /* text before the parameter list: ".visible .entry _Z3fooPf" or ".func (.param .b32 r) f" */
	char **params; /* each parameter declaration, trimmed, without separating ',' */
	int n_params;
	int has_param_list;
	char *suffix;  /* between ')' and '{' (or ';' for decls): ".maxntid 128, 1, 1" etc. */
	struct ptx_stmt *body;
	int n_body;
};

enum ptx_top_kind {
	PTX_TOP_DIRECTIVE, /* .version .target .address_size .file .extern... anything not var/func */
	PTX_TOP_VAR,       /* module-scope variable: .global .const .shared .tex .surfref ... */
	PTX_TOP_FUNC,
};

struct ptx_top {
	enum ptx_top_kind kind;
	int line;
	char *text;  /* DIRECTIVE and VAR: statement text as written */
	char *name;  /* VAR: declared symbol; FUNC: function name */
	char *space; /* VAR: ".global", ".const", ".shared", ".tex", ... */
	struct ptx_func *func; /* FUNC only */
};

struct ptx_module {
	int ver_major, ver_minor; /* from .version */
	char *target;             /* from .target, e.g. "sm_90a" or "sm_80, debug" */
	int address_size;
	struct ptx_top *items;
	int n_items;
};

/* Parses PTX text (need not be NUL-terminated). */
int ptx_parse(const char *text, size_t len, struct ptx_module **out, char **cause);
void ptx_free(struct ptx_module *m);
/* Writes the module back as PTX text (malloc'd, NUL-terminated; NULL when out
 * of memory). Functions are written as prefix "(" params ")" suffix "{" body
 * "}"; statements from their `text`, or from pred/opcode/ops when text is NULL. */
char *ptx_emit(const struct ptx_module *m, size_t *len);
struct ptx_func *ptx_find_func(const struct ptx_module *m, const char *name);
/* Names of all .entry functions in order (malloc'd array of borrowed names). */
int ptx_list_entries(const struct ptx_module *m, const char ***names, int *n);
/* Drops every function and module variable that `kernel` does not reach
 * (through calls, address-of, or variable initialisers); keeps directives.
 * Fails when the kernel is not in the module. */
int ptx_prune(struct ptx_module *m, const char *kernel, char **cause);
/* Module-scope variables (.global/.const) that function `f` references, directly
 * or through the functions it calls: malloc'd array of borrowed ptx_top pointers. */
int ptx_used_vars(const struct ptx_module *m, const char *func, const struct ptx_top ***vars, int *n);

/* Like ptx_parse, but only the named kernel and what it reaches are fully
 * parsed: other function bodies are skipped by brace matching, so a 10 MB
 * PyTorch PTX file costs one scan. The result equals ptx_parse + ptx_prune. */
int ptx_parse_kernel(const char *text, size_t len, const char *kernel,
		     struct ptx_module **out, char **cause);

/* Parses body statements (instructions, labels, directives, { }) from text,
 * e.g. an expanded probe snippet; `first_line` numbers them. Appends to
 * *stmts (a malloc'd array of *n elements, may start NULL/0). Nested braces
 * must balance. */
int ptx_parse_stmts(const char *text, size_t len, int first_line,
		    struct ptx_stmt **stmts, int *n, char **cause);
/* The body index of the label a direct branch (statement i of f) goes to;
 * -1 when i is no `bra` or its label is not in f. */
int ptx_branch_target(const struct ptx_func *f, int i);
/* Splits one instruction ("@%p1 ld.global.u32 %r1, [%rd1];") into *insn. */
int ptx_insn_parse(const char *text, struct ptx_insn *insn, char **cause);
/* Frees what a statement owns (text, insn fields), leaving it zeroed. Every
 * string in the model is individually malloc'd and owned by its parent. */
void ptx_stmt_clear(struct ptx_stmt *s);
void ptx_func_free(struct ptx_func *f);

/* Opcode matching on dotted parts, never on substrings: the first parts must be
 * equal and the pattern's remaining parts must appear in the opcode in order.
 * "ld.global" matches "ld.global.nc.v4.f32" and "ld.relaxed.gpu.global.u32" but
 * not "ld.globalx", "ldu.global" or "wld.global"; "mma.sync" does not match
 * "wmma.mma.sync". */
int ptx_opcode_matches(const char *opcode, const char *pattern);
/* The same match starting at any dotted part of the opcode: NEUTRINO's
 * substring positions, where "mma.sync.aligned" also takes
 * "wmma.mma.sync.aligned.row.col..." (its tensorop_count counts both). */
int ptx_opcode_matches_within(const char *opcode, const char *pattern);

#endif
