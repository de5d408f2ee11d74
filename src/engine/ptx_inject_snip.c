/* Snippets, prepared once per probe: comments stripped, the probe's
 * registers renamed to %ntop_p<k>_<name> (declarations hoisted to the
 * prologue), each statement split into an instruction line or a parsed
 * SAVE, and every hook's SAVEs checked against the map's records. */
#include "engine/ptx_inject_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/ptx_int.h"

/* Copy of a snippet with // and block comments blanked out. */
static char *strip_comments(const char *s)
{
	size_t n = strlen(s);
	char *r = malloc(n + 1);
	if (!r)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		if (s[i] == '/' && s[i + 1] == '/') {
			while (i < n && s[i] != '\n')
				i++;
		} else if (s[i] == '/' && s[i + 1] == '*') {
			i += 2;
			while (i < n && !(s[i] == '*' && s[i + 1] == '/'))
				i++;
			i = i < n ? i + 2 : n;
			r[o++] = ' ';
		} else {
			r[o++] = s[i++];
		}
	}
	r[o] = 0;
	return r;
}

/* ---- probe register renaming ------------------------------------------- */

static int rename_add(struct iprobe *ip, const char *name, size_t len, int range)
{
	for (int i = 0; i < ip->n_ren; i++)
		if (strlen(ip->ren[i].name) == len && !memcmp(ip->ren[i].name, name, len))
			return 0; /* declared in two snippets: one register */
	struct rename *r = realloc(ip->ren, (size_t)(ip->n_ren + 1) * sizeof *r);
	if (!r)
		return -1;
	ip->ren = r;
	r[ip->n_ren].name = ptx_dup_trim(name, len);
	r[ip->n_ren].range = range;
	if (!r[ip->n_ren].name)
		return -1;
	ip->n_ren++;
	return 1;
}

/* Is %token (len bytes, with '%') one of the probe's registers? */
static int rename_match(const struct iprobe *ip, const char *tok, size_t len)
{
	for (int i = 0; i < ip->n_ren; i++) {
		size_t n = strlen(ip->ren[i].name);
		if (len < n || memcmp(tok, ip->ren[i].name, n))
			continue;
		if (len == n) /* a range's bare name appears only in its declaration */
			return 1;
		if (len > n && ip->ren[i].range) {
			size_t k = n;
			while (k < len && isdigit((unsigned char)tok[k]))
				k++;
			if (k == len)
				return 1;
		}
	}
	return 0;
}

/* Appends text with the probe's registers renamed. */
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

static int is_reg_decl(const char *stmt)
{
	return strncmp(stmt, ".reg", 4) == 0 && isspace((unsigned char)stmt[4]);
}

/* ".reg .b32 %a, %b<4>" (without ';'): records names, appends renamed
 * declarations of names not seen before to inj->decls. */
static int decl_collect(struct inj *in, struct iprobe *ip, const char *stmt)
{
	const char *p = stmt + 4;
	const char *names = strchr(p, '%');
	if (!names)
		return cause_set(in->cause, "probe '%s': register declaration without a name: %s",
				 ip->p->name, stmt);
	char *type = ptx_dup_trim(p, (size_t)(names - p));
	if (!type)
		return -1;
	for (const char *q = names; *q;) {
		q = inject_skip_ws(q);
		size_t n = strcspn(q, ",");
		size_t nl = strcspn(q, "<,");
		while (nl && isspace((unsigned char)q[nl - 1]))
			nl--;
		int range = nl < n && q[nl] == '<';
		if (nl < 2 || q[0] != '%') {
			free(type);
			return cause_set(in->cause, "probe '%s': bad register declaration: %s",
					 ip->p->name, stmt);
		}
		int fresh = rename_add(ip, q, nl, range);
		if (fresh < 0) {
			free(type);
			return -1;
		}
		if (fresh) {
			char *one = ptx_dup_trim(q, n);
			strbuf_printf(&in->decls, ".reg %s ", type);
			if (one)
				rename_text(&in->decls, ip, one);
			strbuf_puts(&in->decls, ";\n");
			free(one);
		}
		q += n;
		if (*q == ',')
			q++;
	}
	free(type);
	return 0;
}

/* Calls fn on each ';'-terminated statement of a comment-free snippet. */
typedef int (*stmt_fn)(struct inj *in, struct iprobe *ip, struct snip *sn, const char *stmt);

static int for_each_stmt(struct inj *in, struct iprobe *ip, struct snip *sn, const char *text,
			 stmt_fn fn)
{
	const char *s = text;
	while (*s) {
		size_t n = strcspn(s, ";");
		char *stmt = ptx_dup_trim(s, n);
		if (!stmt)
			return cause_set(in->cause, "out of memory");
		int rc = *stmt ? fn(in, ip, sn, stmt) : 0;
		free(stmt);
		if (rc < 0)
			return -1;
		s += n;
		if (*s == ';')
			s++;
	}
	return 0;
}

static int decl_stmt(struct inj *in, struct iprobe *ip, struct snip *sn, const char *stmt)
{
	(void)sn;
	if (is_reg_decl(stmt))
		return decl_collect(in, ip, stmt);
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

static int line_stmt(struct inj *in, struct iprobe *ip, struct snip *sn, const char *stmt)
{
	if (is_reg_decl(stmt))
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
 * a SAVE at an instruction tracepoint makes the map's cursor dynamic. */
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
				 p->map.level == PROBE_LEVEL_WARP ? "warp" : "thread", m->cap_bytes);
	if (p->hooks[h].kind == PROBE_TP_INSN)
		m->dynamic = 1;
	return 0;
}

/* Every hook's declarations (and the loader's, p->decls) are collected
 * before any line is renamed: a register declared in the exit snippet may
 * be used at the entry. */
static int snip_prepare_all(struct inj *in, struct iprobe *ip, char **clean)
{
	const struct probe *p = ip->p;
	if (p->decls && for_each_stmt(in, ip, NULL, p->decls, decl_stmt) < 0)
		return -1;
	for (int h = 0; h < p->n_hooks; h++) {
		clean[h] = strip_comments(p->hooks[h].snippet ? p->hooks[h].snippet : "");
		if (!clean[h])
			return cause_set(in->cause, "out of memory");
		if (for_each_stmt(in, ip, NULL, clean[h], decl_stmt) < 0)
			return -1;
	}
	for (int h = 0; h < p->n_hooks; h++) {
		struct snip *sn = &ip->snips[h];
		int rc = for_each_stmt(in, ip, sn, clean[h], line_stmt);
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
	char **clean = calloc((size_t)(n_hooks ? n_hooks : 1), sizeof *clean);
	if (!clean)
		return cause_set(in->cause, "out of memory");
	int rc = snip_prepare_all(in, ip, clean);
	for (int h = 0; h < n_hooks; h++)
		free(clean[h]);
	free(clean);
	return rc;
}

void ptx_inject_snip_free(struct iprobe *ip)
{
	for (int i = 0; i < ip->n_ren; i++)
		free(ip->ren[i].name);
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
