/* A probe's snippet at one site: its lines with the helpers (CLOCK, GTIMER,
 * SMID; ADDR, BYTES, OUT, IN1..IN3 at instruction tracepoints) replaced,
 * and its SAVEs handed to ptx_inject_save.c. */
#include "engine/ptx/ptx_inject_int.h"

#include <stdio.h>
#include <string.h>

#include "common/cause.h"

struct site ptx_inject_site_at(enum site_kind kind, const struct ptx_insn *insn)
{
	struct site st;
	memset(&st, 0, sizeof st);
	st.kind = kind;
	st.insn = insn;
	st.sa_map = -1;
	st.index = -1;
	st.region = -1;
	return st;
}

/* A helper is a word of its own: not the tail of a name, register or
 * .directive. */
static int word_starts_at(const char *s, size_t i)
{
	return i == 0 || !(inject_is_ident((unsigned char)s[i - 1]) || s[i - 1] == '%' || s[i - 1] == '.');
}

static int helper_at(const char *s, size_t i, const char *word)
{
	size_t n = strlen(word);
	if (strncmp(s + i, word, n) || inject_is_ident((unsigned char)s[i + n]))
		return 0;
	return word_starts_at(s, i);
}

int ptx_inject_site_has_helper(const char *s, const char *word)
{
	for (const char *p = strstr(s, word); p; p = strstr(p + 1, word))
		if (helper_at(s, (size_t)(p - s), word))
			return 1;
	return 0;
}

static int is_insn_helper(const char *word)
{
	return !strcmp(word, "ADDR") || !strcmp(word, "BYTES") || !strcmp(word, "OUT") ||
	       (!strncmp(word, "IN", 2) && word[2] >= '1' && word[2] <= '3' && !word[3]);
}

/* What an instruction helper stands for at the traced instruction (BYTES
 * is written to `bytes`). */
static int insn_helper(struct inj *in, const char *word, const struct site *st, char *bytes,
		       size_t bytes_len, const char **rep)
{
	const struct ptx_insn *insn = st->insn;
	static const char *const ops[] = { "OUT", "IN1", "IN2", "IN3" };
	if (!insn)
		return cause_set(in->cause, "%s is only defined at instruction tracepoints", word);
	if (!strcmp(word, "ADDR")) {
		*rep = "%ntop_addr";
	} else if (!strcmp(word, "BYTES") && st->bytes_wide) {
		*rep = "%ntop_bw";
	} else if (!strcmp(word, "BYTES")) {
		if (ptx_inject_bytes(insn, bytes, bytes_len, in->cause) < 0)
			return -1;
		*rep = bytes;
	} else {
		int idx = 0;
		while (strcmp(ops[idx], word))
			idx++;
		if (idx >= insn->n_ops)
			return cause_set(in->cause, "%s: '%s' has only %d operands", word, insn->opcode,
					 insn->n_ops);
		*rep = insn->ops[idx].text;
	}
	return 0;
}

/* SITE and REGION: numbers known here, written as immediates (ptxas folds
 * the arithmetic a snippet does on them). */
static int number_helper(struct inj *in, const char *word, int v, char *buf, size_t n, const char **rep)
{
	if (v < 0)
		return cause_set(in->cause, "%s is only defined at %s", word,
				 word[0] == 'S' ? "instruction and region sites" : "region boundaries");
	snprintf(buf, n, "%d", v);
	*rep = buf;
	return 0;
}

/* What helper `word` stands for here; NULL when it is no helper. */
static int helper_text(struct inj *in, const char *word, const struct site *st, char *bytes,
		       size_t bytes_len, const char **rep)
{
	*rep = NULL;
	if (!strcmp(word, "SITE"))
		return number_helper(in, word, st->index, bytes, bytes_len, rep);
	if (!strcmp(word, "REGION"))
		return number_helper(in, word, st->region, bytes, bytes_len, rep);
	if (!strcmp(word, "CLOCK"))
		*rep = "%clock64";
	else if (!strcmp(word, "GTIMER"))
		*rep = "%globaltimer";
	else if (!strcmp(word, "SMID"))
		*rep = "%smid";
	else if (is_insn_helper(word))
		return insn_helper(in, word, st, bytes, bytes_len, rep);
	return 0;
}

static int could_be_helper(const char *s, size_t i)
{
	return isupper((unsigned char)s[i]) && word_starts_at(s, i);
}

int ptx_inject_site_expand(struct inj *in, struct strbuf *sb, const char *s, const struct site *st)
{
	size_t i = 0, n = strlen(s);
	while (i < n) {
		if (!could_be_helper(s, i)) {
			size_t k = i + 1;
			while (k < n && !could_be_helper(s, k))
				k++;
			strbuf_append(sb, s + i, k - i);
			i = k;
			continue;
		}
		size_t k = i;
		while (k < n && inject_is_ident((unsigned char)s[k]))
			k++;
		char word[16];
		size_t wl = k - i < sizeof word ? k - i : sizeof word - 1;
		memcpy(word, s + i, wl);
		word[wl] = 0;
		const char *rep;
		char bytes[64];
		if (helper_text(in, word, st, bytes, sizeof bytes, &rep) < 0)
			return -1;
		if (rep)
			strbuf_puts(sb, rep);
		else
			strbuf_append(sb, s + i, k - i);
		i = k;
	}
	return 0;
}

/* Does the instruction read its sources as 64-bit values? Its last type
 * part says (cvt.u32.u64 reads u64, mul.wide.u32 reads u32). */
static int reads_64(const char *stmt)
{
	const char *op = stmt;
	if (*op == '@' && (op = strchr(op, ' ')) != NULL)
		op++;
	if (!op)
		return 0;
	int wide = 0;
	for (const char *p = op; *p && *p != ' ';) {
		size_t k = strcspn(p, ". ");
		if (k >= 2 && strchr("usbf", p[0]) && isdigit((unsigned char)p[1]))
			wide = k == 3 && p[1] == '6' && p[2] == '4';
		p += k;
		p += *p == '.';
	}
	return wide;
}

int ptx_inject_site_bytes64(struct inj *in, struct strbuf *sb, const char *text, struct site *st, int need64)
{
	char bytes[64];
	st->bytes_wide = 0;
	if (!need64 || !st->insn || !ptx_inject_site_has_helper(text, "BYTES"))
		return 0;
	if (ptx_inject_bytes(st->insn, bytes, sizeof bytes, in->cause) < 0)
		return -1;
	if (bytes[0] != '%')
		return 0; /* an immediate fits any width */
	strbuf_printf(sb, "cvt.u64.u32 %%ntop_bw, %s;\n", bytes);
	st->bytes_wide = 1;
	return 0;
}

int ptx_inject_site_snip(struct inj *in, struct strbuf *sb, const struct iprobe *ip, int hook,
			 struct site *st)
{
	const struct snip *sn = &ip->snips[hook];
	struct save_state ss;
	memset(&ss, 0, sizeof ss); /* set up by the first SAVE */
	for (int i = 0; i < sn->n; i++) {
		const struct snip_line *l = &sn->lines[i];
		int rc;
		if (l->save) {
			rc = ptx_inject_save_emit(in, sb, ip, sn, l, st, &ss);
		} else {
			rc = ptx_inject_site_bytes64(in, sb, l->text, st, reads_64(l->text));
			if (rc == 0)
				rc = ptx_inject_site_expand(in, sb, l->text, st);
			strbuf_puts(sb, ";\n");
			st->bytes_wide = 0;
		}
		if (rc < 0)
			return cause_wrap(in->cause, "probe '%s' hook '%s'", ip->p->name,
					  ip->p->hooks[hook].name);
	}
	return 0;
}
