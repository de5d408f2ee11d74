/* Inserted code as the injector builds it: lines of AMDGPU assembly, one
 * instruction each, which the hazard pass (amdgpu_hazard.c) reads and
 * pads before they are joined into the text llvm-mc assembles. */
#ifndef NTOP_AMDGPU_CODE_H
#define NTOP_AMDGPU_CODE_H

struct amdgpu_code {
	char **line;
	int *origin;      /* per line: the probe file's line it came from, 0 for the engine's own */
	int n, cap;
	int cur;          /* the origin lines added now get */
	int oom;          /* an allocation failed: the code is incomplete */
};

void amdgpu_code_add(struct amdgpu_code *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends every line of src, with its origin. */
void amdgpu_code_cat(struct amdgpu_code *c, const struct amdgpu_code *src);
/* The lines joined as "\tLINE\n..." (malloc'd; NULL when empty or oom). */
char *amdgpu_code_text(const struct amdgpu_code *c);
void amdgpu_code_done(struct amdgpu_code *c);

/* A register operand read from text: 's' (SGPR), 'v' (VGPR), 'a' (AGPR),
 * 'e' (EXEC), 'c' (VCC), 'm' (M0), 't' (TTMP), first index, count. */
struct amdgpu_reg {
	char file;
	int first, count;
};

/* Reads "s5", "s[4:5]", "v7", "exec", "exec_lo", "vcc", "m0", "ttmp9";
 * 0, or -1 when op is not a register. */
int amdgpu_code_reg(const char *op, struct amdgpu_reg *r);
/* Splits an instruction line into its mnemonic and operands (copies into
 * buf), then the modifiers after the last operand, one entry each
 * ("offset:16", "glc"): returns the count (at most max). */
int amdgpu_code_split(const char *line, char *buf, unsigned len, char **mnemonic, char **ops, int max);

#endif
