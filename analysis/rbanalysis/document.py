"""A report as a list of blocks, rendered to Markdown and to HTML (figures
inline as base64 PNG, so report.html is one self-contained file).  Every
table is also written as CSV under tables/ with full precision; what a
table shows goes through formatting.py (sizes in KiB/MiB, claim values in
percent as in the headline).

The HTML is for a reader at a screen: a contents list with anchors, the
headline in a box with coloured verdicts, every table in a box of its own
that scrolls sideways (and, when long, downwards under a sticky header),
figures side by side, and the report's Markdown (emphasis, code, links)
rendered, never left as text."""

import base64
import html
import os
import re
import struct

from . import formatting

fmt = formatting.number     # the name the rest of the package uses

# More rows than this: the table scrolls in a box of its own, header kept.
LONG_TABLE_ROWS = 15

# Verdict classes (claims table, verdict_class) and their colours.
VERDICT_COLOURS = {"meets": "#1a7f37", "equivalent": "#1a7f37", "below": "#c62828",
                   "not-equivalent": "#c62828", "inconclusive": "#9a6700", "missing": "#6e7781"}

CSS = """
body{font-family:sans-serif;max-width:1240px;margin:auto;padding:0 16px;line-height:1.4}
nav.toc{border:1px solid #ddd;background:#fafafa;padding:4px 12px;font-size:13px}
nav.toc ul{margin:2px 0;padding-left:18px}nav.toc>ul{columns:2}
.headline{border:2px solid #444;border-radius:6px;padding:6px 14px;margin:12px 0;background:#f6f8fa}
.headline .tablebox{border:none}.headline table{font-size:14px}.headline td,.headline th{border:none;text-align:left;padding:3px 10px 3px 0}
.verdict{font-weight:bold;padding:1px 6px;border-radius:4px;color:#fff}
%s
.tablebox{overflow:auto;max-width:100%%;margin:6px 0;border:1px solid #ddd}
.tablebox{max-height:28em}
table{border-collapse:collapse;font-size:12px}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
td{max-width:24em;overflow-wrap:break-word}td.n{text-align:right;white-space:nowrap}
th{background:#eee;position:sticky;top:0;z-index:1}
.figures{display:flex;flex-wrap:wrap;gap:10px 16px}
figure{margin:6px 0;flex:0 1 592px;max-width:100%%}figure.wide{flex:0 1 900px}
figure img{width:100%%;height:auto}figcaption{font-size:12px;color:#333}
p.note{color:#555;font-style:italic}
small a{overflow-wrap:anywhere}
@media print{body{max-width:none}nav.toc{display:none}
.tablebox{overflow:visible;max-height:none;border:none}
table{font-size:8px}td{max-width:none;overflow-wrap:anywhere}td.n{white-space:normal}
td,th{padding:1px 3px}th{position:static;overflow-wrap:anywhere}figure{break-inside:avoid}}
""" % "\n".join(".verdict.%s{background:%s}" % kv for kv in VERDICT_COLOURS.items())

# Source columns shown with a unit: name -> formatter (the CSV keeps the number).
COLUMN_FORMATS = ((re.compile(r"(^|_)size_bytes$|^bytes_|_bytes_|_bytes$"), formatting.size),
                  (re.compile(r"^(comm_reduction|compute_efficiency)(_low|_high)?$"), formatting.percent))


class Document:
    def __init__(self, outdir):
        self.outdir = outdir
        self.blocks = []
        self.csv_files = []
        os.makedirs(os.path.join(outdir, "tables"), exist_ok=True)

    def heading(self, level, text):
        self.blocks.append(("h", level, text))

    def para(self, text):
        self.blocks.append(("p", text))

    def note(self, text):
        """A remark in place of something absent (a figure without data)."""
        self.blocks.append(("note", text))

    def bullets(self, items):
        if items:
            self.blocks.append(("ul", list(items)))

    def headline(self, lines, rows):
        """The headline: lines (Markdown) for report.md; rows [(claim,
        platform, value, paper, verdict, verdict_class)] for the HTML box
        (lines instead where rows is empty)."""
        self.blocks.append(("headline", list(lines), list(rows)))

    def csv(self, df, name):
        """Write df in full precision to tables/<name>.csv; return that path."""
        csv = os.path.join("tables", name + ".csv")
        df.to_csv(os.path.join(self.outdir, csv), index=False, float_format="%.17g")
        self.csv_files.append(csv)
        return csv

    def table(self, df, name, columns=None, caption=None):
        """Show df (optionally a subset/renaming {col: header}); write the
        full table to tables/<name>.csv."""
        if df is None or df.empty:
            self.note("(no data for this table)")
            return
        csv = self.csv(df, name)
        cols = [c for c in columns if c in df.columns] if columns else list(df.columns)
        cells = [[_cell(c, v) for c, v in zip(cols, r)]
                 for r in df[cols].itertuples(index=False, name=None)]
        heads = [columns[c] if columns else str(c) for c in cols]
        # a column with no value in any row says nothing here (the CSV keeps it)
        keep = [j for j in range(len(cols)) if any(r[j] not in ("", "-") for r in cells)]
        if keep and len(keep) < len(cols):
            heads = [heads[j] for j in keep]
            cells = [[r[j] for j in keep] for r in cells]
        self.blocks.append(("table", heads, cells, csv, caption))

    def figure(self, filename, caption):
        self.blocks.append(("fig", filename, caption))

    # ------------------------------------------------------------ render
    def markdown(self):
        out = []
        for b in self.blocks:
            if b[0] == "h":
                out.append("#" * b[1] + " " + b[2])
            elif b[0] == "p":
                out.append(b[1])
            elif b[0] == "note":
                out.append("_%s_" % b[1])
            elif b[0] == "headline":
                out.append("\n\n".join(b[1]))
            elif b[0] == "ul":
                out.append("\n".join("- " + i for i in b[1]))
            elif b[0] == "table":
                out.append(_md_table(b[1], b[2]) + "\n\n_(full table: [%s](%s))_" % (b[3], b[3]))
            elif b[0] == "fig":
                out.append("![%s](%s)\n\n_%s_" % (b[2], b[1], b[2]))
            out.append("")
        return "\n".join(out)

    def html(self, title):
        ids = _anchors(self.blocks)
        parts = ["<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
                 "<meta name='viewport' content='width=device-width, initial-scale=1'>",
                 "<title>%s</title>" % html.escape(title), "<style>%s</style>" % CSS,
                 "</head><body>"]
        toc_done = False
        figs = []     # consecutive figures share one row-wrapping box

        def flush_figures():
            if figs:
                parts.append("<div class='figures'>%s</div>" % "".join(figs))
                figs.clear()

        for i, b in enumerate(self.blocks):
            if b[0] == "fig":
                figs.append(self._html_figure(b[1], b[2]))
                continue
            flush_figures()
            if b[0] == "h":
                if b[1] >= 2 and not toc_done:
                    parts.append(_toc(self.blocks, ids))
                    toc_done = True
                parts.append("<h%d id='%s'>%s</h%d>" % (b[1], ids[i], _inline(b[2]), b[1]))
            elif b[0] == "p":
                parts.append("<p>%s</p>" % _inline(b[1]))
            elif b[0] == "note":
                parts.append("<p class='note'>%s</p>" % _inline(b[1]))
            elif b[0] == "headline":
                parts.append(_html_headline(b[1], b[2]))
            elif b[0] == "ul":
                parts.append("<ul>%s</ul>" % "".join("<li>%s</li>" % _inline(x) for x in b[1]))
            elif b[0] == "table":
                parts.append(_html_table(b[1], b[2]))
                parts.append("<p><small>full table: <a href='%s'>%s</a></small></p>"
                             % (html.escape(b[3], quote=True), html.escape(b[3])))
        flush_figures()
        parts.append("</body></html>")
        return "\n".join(parts)

    def _html_figure(self, filename, caption):
        with open(os.path.join(self.outdir, filename), "rb") as f:
            png = f.read()
        wide = _png_width(png) > 700     # two panels side by side: a row of its own
        return ("<figure%s><img alt='%s' src='data:image/png;base64,%s'>"
                "<figcaption>%s</figcaption></figure>"
                % (" class='wide'" if wide else "", html.escape(caption, quote=True),
                   base64.b64encode(png).decode("ascii"), _inline(caption)))


def _png_width(png):
    """Pixel width from a PNG's IHDR (0 when it is not one)."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or len(png) < 24:
        return 0
    return struct.unpack(">I", png[16:20])[0]


def _cell(column, value):
    for pattern, f in COLUMN_FORMATS:
        if pattern.search(str(column)) and formatting.is_number(value):
            return f(value)
    return fmt(value)


def _md_table(heads, cells):
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    head = "| " + " | ".join(esc(h) for h in heads) + " |"
    sep = "|" + "|".join("---" for _ in heads) + "|"
    rows = ["| " + " | ".join(esc(v) for v in r) + " |" for r in cells]
    return "\n".join([head, sep] + rows)


NUMERIC_CELL = re.compile(r"^[-+~]?\d[\d.e+-]*( ?(%|x|B|KiB|MiB|GiB))?$")


def _html_cell(text):
    """A cell: numbers right-aligned and kept on one line; long names may
    break after ',', ';', '=' or '[' (s2[sketch_width=...,...])."""
    if NUMERIC_CELL.match(text):
        return "<td class='n'>%s</td>" % html.escape(text)
    return "<td>%s</td>" % _inline(text, _breakable)


def _breakable(text):
    return "<wbr>".join(html.escape(p) for p in re.split(r"(?<=[,;=\[/])", text))


def _html_table(heads, cells):
    head = "".join("<th>%s</th>" % html.escape(str(h)) for h in heads)
    rows = "".join("<tr>%s</tr>" % "".join(_html_cell(v) for v in r) for r in cells)
    return ("<div class='tablebox%s'><table><thead><tr>%s</tr></thead><tbody>%s</tbody>"
            "</table></div>" % (" long" if len(cells) > LONG_TABLE_ROWS else "", head, rows))


def _html_headline(lines, rows):
    if not rows:
        return "<div class='headline'>%s</div>" % "".join("<p>%s</p>" % _inline(x) for x in lines)
    body = "".join(
        "<tr><td>%s</td><td>%s</td><td><b>%s</b></td><td>paper %s</td>"
        "<td><span class='verdict %s'>%s</span></td></tr>"
        % tuple(html.escape(str(x)) for x in (claim, platform, value, paper, cls, verdict))
        for claim, platform, value, paper, verdict, cls in rows)
    return ("<div class='headline'><p><b>Headline</b>: the papers' setting, a core per rank, "
            "a machine not busy, intervals over launches (or an exact value)</p><div class='tablebox'><table><thead><tr><th>claim</th><th>platform</th><th>measured</th>"
            "<th>paper</th><th>verdict</th></tr></thead><tbody>%s</tbody></table></div></div>" % body)


def _slug(text):
    s = re.sub(r"[^a-z0-9]+", "-", re.sub(r"[`*_]", "", text).lower()).strip("-")
    return s or "section"


def _anchors(blocks):
    """A unique id for each heading block (index -> id)."""
    ids, seen = {}, set()
    for i, b in enumerate(blocks):
        if b[0] == "h":
            base = s = _slug(b[2])
            n = 2
            while s in seen:
                s, n = "%s-%d" % (base, n), n + 1
            seen.add(s)
            ids[i] = s
    return ids


def _toc(blocks, ids):
    """Contents: every level-2 heading, its level-3 headings under it."""
    out, open_sub = ["<nav class='toc'><b>Contents</b><ul>"], False
    for i, b in enumerate(blocks):
        if b[0] != "h" or b[1] < 2 or b[1] > 3:
            continue
        link = "<a href='#%s'>%s</a>" % (ids[i], _inline(b[2]))
        if b[1] == 2:
            out.append("%s<li>%s" % ("</ul></li>" if open_sub else "", link))
            out.append("<ul>")
            open_sub = True
        else:
            out.append("<li>%s</li>" % link)
    if open_sub:
        out.append("</ul></li>")
    out.append("</ul></nav>")
    return "".join(out).replace("<ul></ul>", "")


INLINE = re.compile(
    r"`(?P<code>[^`]+)`"
    r"|\[(?P<text>[^\]]+)\]\((?P<href>[^)\s]+)\)"
    r"|\*\*(?P<bold>[^*]+?)\*\*"
    r"|(?<![\w*])\*(?P<em>[^*\s](?:[^*]*?[^*\s])?)\*(?![\w*])"
    r"|(?<![\w])_(?P<em2>[^_\s](?:[^_]*?[^_\s])?)_(?![\w])")


def _inline(text, plain=html.escape):
    """The Markdown the report writes, as HTML: `code`, [text](link),
    **bold**, *emphasis*, _emphasis_; everything else through plain
    (escaped)."""
    out, pos = [], 0
    for m in INLINE.finditer(text):
        out.append(plain(text[pos:m.start()]))
        g = m.groupdict()
        if g["code"] is not None:
            out.append("<code>%s</code>" % html.escape(g["code"]))
        elif g["href"] is not None:
            out.append("<a href='%s'>%s</a>" % (html.escape(g["href"], quote=True),
                                                _inline(g["text"], plain)))
        elif g["bold"] is not None:
            out.append("<b>%s</b>" % _inline(g["bold"], plain))
        else:
            out.append("<i>%s</i>" % _inline(g["em"] if g["em"] is not None else g["em2"], plain))
        pos = m.end()
    out.append(plain(text[pos:]))
    return "".join(out)
