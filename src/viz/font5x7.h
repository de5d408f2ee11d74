/* A 5x7 bitmap font for text in PNG exports: printable ASCII (32-126) plus
 * the micro sign (U+00B5, also used for U+03BC) so axes can say "us" as µs.
 * Anything else draws as '?'. Text is UTF-8; glyphs advance 6 pixels (one
 * blank column) times the scale. */
#ifndef NTOP_FONT5X7_H
#define NTOP_FONT5X7_H
#include <stdint.h>

#include "viz/theme.h"

#define FONT5X7_W 5
#define FONT5X7_H 7
#define FONT5X7_ADVANCE 6
#define FONT5X7_GLYPHS 96 /* 95 printable ASCII + micro */

#define FONT5X7_LINE_H 9 /* rows a line of text may touch: descenders reach 2 below */

/* Rows a glyph is drawn below the text's top: 2 for descenders (g p q y µ). */
int font5x7_drop(uint32_t cp);
/* Glyph rows top to bottom, bit 4 = leftmost column. */
void font5x7_rows(uint32_t cp, uint8_t rows[FONT5X7_H]);
/* Next code point of a UTF-8 string (0 at its end), advancing *s; bytes
 * that do not decode give '?'. */
uint32_t font5x7_next(const char **s);
/* Width in pixels of s drawn at `scale` (no trailing blank column). */
int font5x7_text_width(const char *s, int scale);
/* Draws s with its top-left corner at (x, y) into a w x h RGB (3 bytes per
 * pixel, row-major) image, clipped to the image. */
void font5x7_draw(uint8_t *rgb, int w, int h, int x, int y, const char *s, int scale, struct rgb c);

#endif
