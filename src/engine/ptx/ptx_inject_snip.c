/* Snippets, prepared once per probe: read as the verifier reads them
 * (snippet.h: canonical statements, comments gone), the probe's
 * registers renamed to %ntop_p<k>_<name> (declarations hoisted to the
 * prologue), each statement split into an instruction line or a parsed
 * SAVE, and every hook's SAVEs checked against the map's records. */
#include "engine/ptx/ptx_inject_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/ptx/ptx_int.h"
#include "engine/ptx/snippet.h"

/* ---- probe register renaming ------------------------------------------- */

/* Is %token (len bytes, with '%') one of the probe's registers? The same
 * test the verifier makes (snippet_reg_find): what it let the probe write
 * is exactly what gets renamed. */
static int rename_match(const struct iprobe *ip, const char *tok, size_t len)
{
	return snippet_reg_find(ip->ren, ip->n_ren, tok, len) != NULL;
}

/* Appends canonical statement text with the probe's registers renamed. */
static void rename_text(struct strbuf *sb, const struct iprobe *ip, const char *s)
{
	while (*s) {
		if (*s == '%' && (s[1] == '_' || isalpha((unsigned char)s[1]) || s[1] == '$')) {
			size_t n = 1;
			while (inject_is_ident((unsigned char)s[n]))
				n++;
			if (rename_match(ip, s, n)) {
				strbuf_printf(sb, "%%ntop_p%d_", ip->index);
				strbuf_append(sb, s + 1, n - 1);
			} else {
				strbuf_append(sb, s, n);
			}
			s += n;
		} else {
			strbuf_append(sb, s, 1);
			s++;
		}
	}
}

/* malloc'd copy of s with the probe's registers renamed; NULL when out of memory. */
static char *rename_dup(const struct iprobe *ip, const char *s)
{
	struct strbuf sb;
	strbuf_init(&sb);
	rename_text(&sb, ip, s);
	return strbuf_finish(&sb, NULL);
}

/* ---- statements --------------------------------------------------------- */

static int is_reg_decl(const struct snippet_stmt *st)
{
	return snippet_tok_is(st, 0, ".reg");
}

/* A `.reg` statement: records its names and declares those not seen
 * before (renamed) in inj->decls. */
static int decl_collect(struct inj *in, struct iprobe *ip, const struct snippet_stmt *st)
{
	int n0 = ip->n_ren, bad = 0;
	char why[160];
	if (snippet_decl_parse(st, &ip->ren, &ip->n_ren, &bad, why, sizeof why) < 0)
		return cause_set(in->cause, "probe '%s': %s: %s", ip->p->name, why, st->text);
	for (int i = n0; i < ip->n_ren; i++) {
		const struct snippet_reg *r = &ip->ren[i];
		int seen = 0;
		for (int k = 0; k < i && !seen; k++) /* declared in two snippets: one register */
			seen = !strcmp(ip->ren[k].name, r->name) && ip->ren[k].count == r->count;
		if (seen)
			continue;
		strbuf_printf(&in->decls, ".reg %s %%ntop_p%d_%s", r->type, ip->index, r->name + 1);
		if (r->count)
			strbuf_printf(&in->decls, "<%ld>", r->count);
		strbuf_puts(&in->decls, ";\n");
	}
	return 0;
}

/* "SAVE.u32 {a, b}" -> a snip_save (values renamed). */
static int save_parse(struct inj *in, struct iprobe *ip, struct snip *sn, const char *stmt,
		      struct snip_save *sv)
{
	const char *p = stmt + 4;
	if (!strncmp(p, ".u32", 4) || !strncmp(p, ".b32", 4))
		sv->size = 4;
	else if (!strncmp(p, ".u64", 4) || !strncmp(p, ".b64", 4))
		sv->size = 8;
	else
		return cause_set(in->cause, "probe '%s': SAVE needs .u32 or .u64: %s", ip->p->name, stmt);
	p = inject_skip_ws(p + 4);
	size_t n = strlen(p);
	if (n && *p == '{') {
		if (p[n - 1] != '}')
			return cause_set(in->cause, "probe '%s': SAVE without '}': %s", ip->p->name, stmt);
		p++;
		n -= 2;
	}
	uint32_t off = sn->save_bytes;
	for (size_t i = 0; i <= n;) {
		size_t k = 0;
		while (i + k < n && p[i + k] != ',')
			k++;
		char *v = ptx_dup_trim(p + i, k);
		if (!v || !*v || sv->n_vals == INJECT_SAVE_MAX) {
			free(v);
			return cause_set(in->cause, "probe '%s': bad SAVE value list: %s", ip->p->name, stmt);
		}
		sv->vals[sv->n_vals] = rename_dup(ip, v);
		free(v);
		if (!sv->vals[sv->n_vals])
			return cause_set(in->cause, "out of memory");
		sv->n_vals++;
		if (sv->size == 8 && (off % 8 || ip->p->map.rec_size % 8))
			return cause_set(in->cause, "probe '%s': SAVE.u64 value at record byte %u is not 8-aligned",
					 ip->p->name, off % (ip->p->map.rec_size ? ip->p->map.rec_size : 1));
		off += (uint32_t)sv->size;
		i += k + 1;
	}
	sv->off = sn->save_bytes;
	sn->save_bytes = off;
	return 0;
}

static int line_stmt(struct inj *in, struct iprobe *ip, struct snip *sn, const struct snippet_stmt *st)
{
	const char *stmt = st->text;
	if (is_reg_decl(st))
		return 0; /* hoisted to the prologue */
	struct snip_line *l = realloc(sn->lines, (size_t)(sn->n + 1) * sizeof *l);
	if (!l)
		return cause_set(in->cause, "out of memory");
	sn->lines = l;
	l = &sn->lines[sn->n++];
	memset(l, 0, sizeof *l);
	if (ptx_inject_site_has_helper(stmt, "ADDR"))
		sn->uses_addr = 1;
	if (ptx_inject_site_has_helper(stmt, "BYTES"))
		sn->uses_bytes = 1;
	if (!strncmp(stmt, "SAVE", 4) && stmt[4] == '.') {
		if (ip->map < 0)
			return cause_set(in->cause, "probe '%s': SAVE without a map", ip->p->name);
		l->save = calloc(1, sizeof *l->save);
		if (!l->save)
			return cause_set(in->cause, "out of memory");
		return save_parse(in, ip, sn, stmt, l->save);
	}
	if (stmt[0] == '@' && strstr(stmt, "SAVE."))
		return cause_set(in->cause, "probe '%s': a SAVE cannot be guarded: %s", ip->p->name, stmt);
	l->text = rename_dup(ip, stmt);
	return l->text ? 0 : cause_set(in->cause, "out of memory");
}

/* ---- whole snippets ----------------------------------------------------- */

static void snip_mark_saves(struct snip *sn)
{
	int first = -1, last = -1;
	for (int i = 0; i < sn->n; i++)
		if (sn->lines[i].save) {
			if (first < 0)
				first = i;
			last = i;
		}
	if (first >= 0) {
		sn->lines[first].first_save = 1;
		sn->lines[last].last_save = 1;
	}
}

/* One execution of hook h writes whole records, no more than a unit holds;
 * a SAVE at an instruction tracepoint or a region boundary makes the map's
 * cursor dynamic. */
static int snip_check_saves(struct inj *in, const struct iprobe *ip, int h)
{
	const struct probe *p = ip->p;
	const struct snip *sn = &ip->snips[h];
	if (!sn->save_bytes)
		return 0;
	struct imap *m = &in->maps[ip->map];
	uint32_t rs = p->map.rec_size;
	if (!rs || sn->save_bytes % rs)
		return cause_set(in->cause, "probe '%s' hook '%s': SAVEs write %u bytes, not whole %u-byte records",
				 p->name, p->hooks[h].name, sn->save_bytes, rs);
	if (sn->save_bytes > m->cap_bytes)
		return cause_set(in->cause, "probe '%s' hook '%s': SAVEs write %u bytes, more than the map holds per %s (%u)",
				 p->name, p->hooks[h].name, sn->save_bytes,
				 probe_level_name(p->map.level), m->cap_bytes);
	int anywhere = p->hooks[h].kind == PROBE_TP_INSN || p->hooks[h].kind == PROBE_TP_REGION;
	if (anywhere && m->block)
		return cause_set(in->cause, "probe '%s' hook '%s': a block map's SAVEs sit in entry or exit hooks (its "
				 "warps share one record and no cursor)", p->name, p->hooks[h].name);
	if (anywhere) /* runs any number of times: the cursor lives in a register */
		m->dynamic = 1;
	return 0;
}

/* Hook h's statements as the verifier read them. */
static int snip_read(struct inj *in, const struct iprobe *ip, int h, struct snippet *out)
{
	struct probe_pos bad;
	char why[160];
	if (snippet_read(&ip->p->hooks[h], out, &bad, why, sizeof why) < 0)
		return cause_set(in->cause, "probe '%s' hook '%s': line %d: %s", ip->p->name, ip->p->hooks[h].name,
				 bad.line, why);
	return 0;
}

/* The loader's declarations (p->decls: NEUTRINO's %NR registers, those its
 * snippets write undeclared), read like a snippet. */
static int snip_loader_decls(struct inj *in, struct iprobe *ip)
{
	struct probe_hook loader = { .name = "loader", .snippet = ip->p->decls, .snippet_flat = 1 };
	struct probe_pos bad;
	struct snippet sn;
	char why[160];
	if (snippet_read(&loader, &sn, &bad, why, sizeof why) < 0)
		return cause_set(in->cause, "probe '%s': the loader's declarations: %s", ip->p->name, why);
	int rc = 0;
	for (int i = 0; i < sn.n && rc == 0; i++)
		if (is_reg_decl(&sn.stmts[i]))
			rc = decl_collect(in, ip, &sn.stmts[i]);
	snippet_free(&sn);
	return rc;
}

/* Every hook's declarations (and the loader's, p->decls) are collected
 * before any line is renamed: a register declared in the exit snippet may
 * be used at the entry. */
static int snip_prepare_all(struct inj *in, struct iprobe *ip, struct snippet *read)
{
	const struct probe *p = ip->p;
	if (p->decls && snip_loader_decls(in, ip) < 0)
		return -1;
	for (int h = 0; h < p->n_hooks; h++) {
		if (snip_read(in, ip, h, &read[h]) < 0)
			return -1;
		for (int i = 0; i < read[h].n; i++)
			if (is_reg_decl(&read[h].stmts[i]) && decl_collect(in, ip, &read[h].stmts[i]) < 0)
				return -1;
	}
	for (int h = 0; h < p->n_hooks; h++) {
		struct snip *sn = &ip->snips[h];
		int rc = 0;
		for (int i = 0; i < read[h].n && rc == 0; i++)
			rc = line_stmt(in, ip, sn, &read[h].stmts[i]);
		if (rc < 0)
			cause_wrap(in->cause, "hook '%s'", p->hooks[h].name);
		snip_mark_saves(sn);
		if (rc < 0 || snip_check_saves(in, ip, h) < 0)
			return -1;
	}
	return 0;
}

int ptx_inject_snip_prepare(struct inj *in, struct iprobe *ip)
{
	int n_hooks = ip->p->n_hooks;
	ip->snips = calloc((size_t)(n_hooks ? n_hooks : 1), sizeof *ip->snips);
	if (!ip->snips)
		return cause_set(in->cause, "out of memory");
	struct snippet *read = calloc((size_t)(n_hooks ? n_hooks : 1), sizeof *read);
	if (!read)
		return cause_set(in->cause, "out of memory");
	int rc = snip_prepare_all(in, ip, read);
	for (int h = 0; h < n_hooks; h++)
		snippet_free(&read[h]);
	free(read);
	return rc;
}

void ptx_inject_snip_free(struct iprobe *ip)
{
	free(ip->ren);
	for (int h = 0; ip->snips && h < ip->p->n_hooks; h++) {
		struct snip *sn = &ip->snips[h];
		for (int i = 0; i < sn->n; i++) {
			free(sn->lines[i].text);
			struct snip_save *sv = sn->lines[i].save;
			for (int v = 0; sv && v < sv->n_vals; v++)
				free(sv->vals[v]);
			free(sn->lines[i].save);
		}
		free(sn->lines);
	}
	free(ip->snips);
}
