/* SPDX-License-Identifier: GPL-2.0-or-later */
/* svg.c: a chart of two series as SVG: the frame, the axes, lines or bars, texts escaped. */
#include "render/svg.h"

/* Text for an element's content or an attribute's value: &, <, > and " as entities. */
static void svg_escaped(FILE *out, const char *text)
{
	for (const char *p = text ? text : ""; *p; p++) {
		switch (*p) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			fputc(*p, out);
		}
	}
}

/* <text x=... y=... ATTRS>TEXT</text>, the x with one decimal, TEXT escaped. */
static void svg_label(FILE *out, double x, int y, const char *attrs, const char *text)
{
	fprintf(out, "<text x=\"%.1f\" y=\"%d\"%s>", x, y, attrs);
	svg_escaped(out, text);
	fputs("</text>\n", out);
}

static void svg_head(FILE *out, const struct svg_chart *c)
{
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		     "font-family=\"sans-serif\" font-size=\"12\">\n<title>iolens bench: ",
		c->width, c->height, c->width, c->height);
	svg_escaped(out, c->series[0].name);
	fputs(" and ", out);
	svg_escaped(out, c->series[1].name);
	fputs(" by ", out);
	svg_escaped(out, c->by);
	fprintf(out, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		     "<text x=\"%d\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">",
		c->width / 2);
	svg_escaped(out, c->series[0].name);
	fputs(" and ", out);
	svg_escaped(out, c->series[1].name);
	fputs(" by ", out);
	svg_escaped(out, c->by);
	fputs("</text>\n", out);
}

/* The grid at the left axis's lines, both axes' numbers, the frame, the axes' names, x's labels. */
static void svg_axes(FILE *out, const struct svg_chart *c)
{
	const double plot_w = c->width - c->left - c->right, plot_h = c->height - c->top - c->bottom;
	const int middle_y = c->top + (int)plot_h / 2;

	for (unsigned i = 0; i < c->nticks[0]; i++) {
		double y = c->ticks[0][i].y;

		fprintf(out, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
			     "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"%s\">%g</text>\n",
			c->left, y, c->width - c->right, y, c->left - 6, y + 4, c->series[0].colour,
			c->ticks[0][i].value);
	}
	for (unsigned i = 0; i < c->nticks[1]; i++)
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" fill=\"%s\">%g</text>\n", c->width - c->right + 6,
			c->ticks[1][i].y + 4, c->series[1].colour, c->ticks[1][i].value);
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#444\"/>\n",
		c->left, c->top, plot_w, plot_h);
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 %d %d)\" fill=\"%s\">", 24,
		middle_y, 24, middle_y, c->series[0].colour);
	svg_escaped(out, c->series[0].name);
	fprintf(out, "</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(90 %d %d)\" "
		     "fill=\"%s\">",
		c->width - 20, middle_y, c->width - 20, middle_y, c->series[1].colour);
	svg_escaped(out, c->series[1].name);
	fprintf(out, "</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", c->left + (int)plot_w / 2,
		c->height - 20);
	svg_escaped(out, c->by);
	fputs("</text>\n", out);
	for (unsigned i = 0; i < c->count; i++)
		svg_label(out, c->points[i].x, c->top + (int)plot_h + 18, " text-anchor=\"middle\"",
			  c->points[i].label);
}

/* The legend at the plot's top left: each series' mark (a line's or a bar's) and its name. */
static void svg_legend(FILE *out, const struct svg_chart *c)
{
	static const char *const marks[][2] = { { "— ", "- - " }, { "\u25a0 ", "\u25a0 " } };

	for (int s = 0; s < 2; s++) {
		fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s", c->left + 10 + 80 * s, c->top + 16,
			c->series[s].colour, marks[c->style == SVG_CHART_BARS][s]);
		svg_escaped(out, c->series[s].name);
		fputs("</text>\n", out);
	}
	fputs("</svg>\n", out);
}

/* A series' bar from the plot's floor up to its height, its title "LABEL: VALUE NAME", the value above it. */
static void svg_bar(FILE *out, const struct svg_chart *c, const struct svg_point *p, int s)
{
	/* The left series' bar left of the point's middle, the right one's right of it. */
	double x = s ? p->x : p->x - c->bar_width, text_x = s ? p->x + c->bar_width / 2 : p->x - c->bar_width / 2;
	const double floor = c->top + (double)(c->height - c->top - c->bottom);
	const struct svg_series *series = &c->series[s];
	double y = s ? p->right_y : p->left_y, value = s ? p->right : p->left;

	fprintf(out, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
		series->class_name, x, y, c->bar_width, floor - y, series->colour);
	svg_escaped(out, p->label);
	fprintf(out, ": %.*f %s</title></rect>\n"
		     "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"%s\">%.*f</text>\n",
		series->decimals, value, series->name, text_x, y - 4, series->colour, series->decimals,
		value);
}

/* The knee's dashed line and label, each series' polyline, a dot a point with its value. */
static void svg_lines(FILE *out, const struct svg_chart *c)
{
	const double plot_h = c->height - c->top - c->bottom;

	if (c->knee >= 0 && (unsigned)c->knee < c->count) {
		const struct svg_point *k = &c->points[c->knee];

		fprintf(out, "<line class=\"knee\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#2ca02c\" "
			     "stroke-dasharray=\"6 4\" stroke-width=\"2\"/>\n"
			     "<text class=\"knee\" x=\"%.1f\" y=\"%d\" fill=\"#2ca02c\" text-anchor=\"middle\">knee: ",
			k->x, c->top, k->x, c->top + plot_h, k->x, c->top - 6);
		svg_escaped(out, k->label);
		fputs("</text>\n", out);
	}
	for (int s = 0; s < 2; s++) {
		fprintf(out, "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" %spoints=\"",
			c->series[s].class_name, c->series[s].colour, s ? "stroke-dasharray=\"4 3\" " : "");
		for (unsigned i = 0; i < c->count; i++)
			fprintf(out, "%s%.1f,%.1f", i ? " " : "", c->points[i].x,
				s ? c->points[i].right_y : c->points[i].left_y);
		fputs("\"/>\n", out);
	}
	for (unsigned i = 0; i < c->count; i++) {
		const struct svg_point *p = &c->points[i];

		for (int s = 0; s < 2; s++)
			fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>%.*f %s"
				     "</title></circle>\n",
				p->x, s ? p->right_y : p->left_y, c->series[s].colour, c->series[s].decimals,
				s ? p->right : p->left, c->series[s].name);
	}
}

int svg_chart_write(FILE *out, const struct svg_chart *c)
{
	svg_head(out, c);
	svg_axes(out, c);
	if (c->style == SVG_CHART_BARS) {
		for (unsigned i = 0; i < c->count; i++) {
			svg_bar(out, c, &c->points[i], 0);
			svg_bar(out, c, &c->points[i], 1);
		}
	} else {
		svg_lines(out, c);
	}
	svg_legend(out, c);
	return ferror(out) ? -1 : 0;
}
