/* Terminal cell grid and colour depth downgrades (cellgrid.h). */
#include "viz/cellgrid.h"

#include <stdlib.h>
#include <string.h>

#include "viz/font5x7.h"

/* xterm's colours for palette entries 0-15. */
static const struct rgb color_ansi16[16] = {
	{0, 0, 0},       {205, 0, 0},     {0, 205, 0},     {205, 205, 0},
	{0, 0, 238},     {205, 0, 205},   {0, 205, 205},   {229, 229, 229},
	{127, 127, 127}, {255, 0, 0},     {0, 255, 0},     {255, 255, 0},
	{92, 92, 255},   {255, 0, 255},   {0, 255, 255},   {255, 255, 255},
};
static const uint8_t color_cube[6] = {0, 95, 135, 175, 215, 255};

static int color_dist(struct rgb a, struct rgb b)
{
	int dr = a.r - b.r, dg = a.g - b.g, db = a.b - b.b;
	return dr * dr + dg * dg + db * db;
}

static int color_cube_level(uint8_t v)
{
	int best = 0;
	for (int i = 1; i < 6; i++)
		if (abs(color_cube[i] - v) < abs(color_cube[best] - v))
			best = i;
	return best;
}

uint8_t color_rgb_to_256(struct rgb c)
{
	int r = color_cube_level(c.r), g = color_cube_level(c.g), b = color_cube_level(c.b);
	uint8_t cube = (uint8_t)(16 + 36 * r + 6 * g + b);
	/* grey ramp 232-255: 8 + 10 k */
	int avg = (c.r + c.g + c.b) / 3;
	int k = (avg - 8 + 5) / 10;
	k = k < 0 ? 0 : k > 23 ? 23 : k;
	uint8_t grey = (uint8_t)(232 + k);
	return color_dist(c, color_256_to_rgb(grey)) < color_dist(c, color_256_to_rgb(cube)) ? grey : cube;
}

struct rgb color_256_to_rgb(uint8_t idx)
{
	if (idx < 16)
		return color_ansi16[idx];
	if (idx >= 232) {
		uint8_t v = (uint8_t)(8 + 10 * (idx - 232));
		return (struct rgb){v, v, v};
	}
	int i = idx - 16;
	return (struct rgb){color_cube[i / 36], color_cube[i / 6 % 6], color_cube[i % 6]};
}

uint8_t color_256_to_8(uint8_t idx)
{
	if (idx < 8)
		return idx;
	struct rgb c = color_256_to_rgb(idx);
	uint8_t best = 0;
	for (uint8_t i = 1; i < 8; i++)
		if (color_dist(c, color_ansi16[i]) < color_dist(c, color_ansi16[best]))
			best = i;
	return best;
}

/* ---- grid ---- */

struct cellgrid *cellgrid_create(int w, int h)
{
	if (w <= 0 || h <= 0 || (size_t)w * (size_t)h > (64u << 20) / sizeof(struct cell))
		return NULL;
	struct cellgrid *g = calloc(1, sizeof *g);
	if (!g || !(g->cells = calloc((size_t)w * h, sizeof *g->cells))) {
		free(g);
		return NULL;
	}
	g->w = w;
	g->h = h;
	cellgrid_clear(g, (struct rgb){255, 255, 255}, (struct rgb){0, 0, 0});
	return g;
}

void cellgrid_free(struct cellgrid *g)
{
	if (!g)
		return;
	free(g->cells);
	free(g);
}

struct cell *cellgrid_at(struct cellgrid *g, int x, int y)
{
	if (x < 0 || y < 0 || x >= g->w || y >= g->h)
		return NULL;
	return &g->cells[(size_t)y * g->w + x];
}

void cellgrid_clear(struct cellgrid *g, struct rgb fg, struct rgb bg)
{
	g->base_bg = bg;
	for (int y = 0; y < g->h; y++)
		for (int x = 0; x < g->w; x++)
			cellgrid_set(g, x, y, " ", fg, bg, 0);
}

/* Moves an ink index that collapsed into the background's off it. */
static void cell_keep_ink(struct cell *c)
{
	struct rgb b = color_256_to_rgb(c->bg256);
	if (c->fg256 == c->bg256)
		c->fg256 = b.r + b.g + b.b > 3 * 128 ? 240 : 250; /* dark grey on light, light on dark */
	if (c->fg8 == c->bg8)
		c->fg8 = c->bg8 == 7 ? 0 : 7;
}

void cellgrid_set(struct cellgrid *g, int x, int y, const char *glyph, struct rgb fg, struct rgb bg,
		  uint8_t attr)
{
	struct cell *c = cellgrid_at(g, x, y);
	if (!c)
		return;
	size_t n = strlen(glyph);
	if (n == 0 || n >= CELL_GLYPH_MAX) {
		glyph = "?";
		n = 1;
	}
	memcpy(c->glyph, glyph, n + 1);
	c->fg = fg;
	c->bg = bg;
	c->attr = attr;
	c->fg256 = color_rgb_to_256(fg);
	c->bg256 = color_rgb_to_256(bg);
	c->fg8 = color_256_to_8(c->fg256);
	c->bg8 = color_256_to_8(c->bg256);
	if (strcmp(glyph, " ") != 0 && rgb_eq(bg, g->base_bg) && !rgb_eq(fg, bg))
		cell_keep_ink(c);
}

int cellgrid_puts(struct cellgrid *g, int x, int y, const char *s, struct rgb fg, struct rgb bg,
		  int max_cells)
{
	int n = 0;
	while (*s && x + n < g->w && (max_cells < 0 || n < max_cells)) {
		const char *p = s;
		font5x7_next(&s); /* one UTF-8 character per cell */
		char ch[CELL_GLYPH_MAX];
		size_t len = (size_t)(s - p) < sizeof ch - 1 ? (size_t)(s - p) : sizeof ch - 1;
		memcpy(ch, p, len);
		ch[len] = 0;
		if ((unsigned char)ch[0] < 0x20)
			strcpy(ch, "?");
		cellgrid_set(g, x + n, y, ch, fg, bg, 0);
		n++;
	}
	return n;
}

int cellgrid_utf8_len(const char *s)
{
	int n = 0;
	while (font5x7_next(&s))
		n++;
	return n;
}

void cellgrid_row_text(const struct cellgrid *g, int y, struct strbuf *sb)
{
	if (y < 0 || y >= g->h)
		return;
	for (int x = 0; x < g->w; x++)
		strbuf_puts(sb, g->cells[(size_t)y * g->w + x].glyph);
}

static void cell_sgr(struct strbuf *sb, const struct cell *c, enum color_depth d)
{
	strbuf_puts(sb, "\033[0");
	if (c->attr & CELL_BOLD)
		strbuf_puts(sb, ";1");
	if (c->attr & CELL_UNDERLINE)
		strbuf_puts(sb, ";4");
	if (c->attr & CELL_REVERSE)
		strbuf_puts(sb, ";7");
	if (d == DEPTH_RGB)
		strbuf_printf(sb, ";38;2;%u;%u;%u;48;2;%u;%u;%u", c->fg.r, c->fg.g, c->fg.b, c->bg.r, c->bg.g,
			      c->bg.b);
	else if (d == DEPTH_256)
		strbuf_printf(sb, ";38;5;%u;48;5;%u", c->fg256, c->bg256);
	else if (d == DEPTH_8)
		strbuf_printf(sb, ";%u;%u", 30 + c->fg8, 40 + c->bg8);
	strbuf_puts(sb, "m");
}

void cellgrid_ansi(const struct cellgrid *g, enum color_depth depth, struct strbuf *sb)
{
	for (int y = 0; y < g->h; y++) {
		const struct cell *prev = NULL;
		for (int x = 0; x < g->w; x++) {
			const struct cell *c = &g->cells[(size_t)y * g->w + x];
			if (!prev || !rgb_eq(prev->fg, c->fg) || !rgb_eq(prev->bg, c->bg) || prev->attr != c->attr)
				cell_sgr(sb, c, depth);
			strbuf_puts(sb, c->glyph);
			prev = c;
		}
		strbuf_puts(sb, "\033[0m\n");
	}
}

void cellgrid_half(struct cellgrid *g, int x, int y, int top_on, struct rgb top, int bot_on, struct rgb bot,
		   struct rgb bg)
{
	if (top_on && bot_on) {
		if (rgb_eq(top, bot))
			cellgrid_set(g, x, y, "\xe2\x96\x88", top, bg, 0); /* █ */
		else
			cellgrid_set(g, x, y, "\xe2\x96\x80", top, bot, 0); /* ▀ on the lower colour */
	} else if (top_on) {
		cellgrid_set(g, x, y, "\xe2\x96\x80", top, bg, 0);
	} else if (bot_on) {
		cellgrid_set(g, x, y, "\xe2\x96\x84", bot, bg, 0); /* ▄ */
	}
}

int cellgrid_fit(struct cellgrid **g, int w, int h)
{
	w = w > 0 ? w : 1;
	h = h > 0 ? h : 1;
	if (*g && (*g)->w == w && (*g)->h == h)
		return 0;
	cellgrid_free(*g);
	*g = cellgrid_create(w, h);
	return *g ? 0 : -1;
}

void cellgrid_blit(struct cellgrid *dst, const struct cellgrid *src, int x, int y)
{
	for (int r = 0; r < src->h; r++)
		for (int col = 0; col < src->w; col++) {
			struct cell *d = cellgrid_at(dst, x + col, y + r);
			if (d)
				*d = src->cells[(size_t)r * src->w + col];
		}
}
