"""A report as a list of blocks, rendered to Markdown and to HTML (figures
inline as base64 PNG, so report.html is one self-contained file).  Every
table is also written as CSV under tables/ with full precision; what a
table shows goes through formatting.py (sizes in KiB/MiB, claim values in
percent as in the headline).

The HTML is for a reader at a screen 1280 px wide: a contents list with
anchors, the headline in a box with coloured verdicts and a key to the
colours, keys (glossary, group ids) in columns, every table in a box of
its own that fits the column (cells wrap; a long table, more than
LONG_TABLE_ROWS rows, folded under a line that says what it holds and
opens it, then scrolling downwards under a sticky header; a table marked
full, such as the claims, shows every row), a row's notes (why a verdict,
what would change it) as a line under it, figures three to a row (two
panels: half a row), and the report's Markdown (emphasis, code,
links) rendered, never left as text."""

import base64
import html
import os
import re
import struct

from . import formatting

fmt = formatting.number     # the name the rest of the package uses

# More rows than this: the table is folded (a line says what it holds and
# opens it), then scrolls in its box under a sticky header.
LONG_TABLE_ROWS = 6
# A row's note longer than this (characters) shows its first line, the rest
# folded (summary ...).
NOTE_OPEN = 110

# Verdict classes and their colours: formatting's, shared with the figures.
VERDICT_COLOURS, VERDICT_KEY = formatting.VERDICT_COLOURS, formatting.VERDICT_KEY

CSS = """
body{font-family:sans-serif;max-width:1240px;margin:auto;padding:0 16px;line-height:1.3}
h1{margin:10px 0 4px}h2{margin:16px 0 5px}h3{margin:10px 0 4px;font-size:1.05em}p{margin:5px 0}
nav.toc{border:1px solid #ddd;background:#fafafa;padding:2px 12px;font-size:12px}
nav.toc ul{margin:1px 0;padding-left:16px}nav.toc>ul{columns:3}nav.toc li{break-inside:avoid}
.headline{border:2px solid #444;border-radius:6px;padding:4px 12px;margin:8px 0;background:#f6f8fa}
.headline .tablebox{border:none}.headline table{font-size:13px;width:100%%}.headline td,.headline th{border:none;text-align:left;padding:2px 10px 2px 0}
.headline td{max-width:none}.headline details.why{font-size:12px;color:#444;font-weight:normal}
.headline details.why summary{cursor:pointer;color:#0550ae;font-size:11.5px}
.verdict{font-weight:bold;padding:1px 6px;border-radius:4px;color:#fff;display:inline-block}
%s
.vkey{font-size:12px;margin:3px 0}.vkey .verdict{margin-right:2px}.vkey>span.k{margin-right:12px;white-space:nowrap}
.tablebox{overflow-x:auto;max-width:100%%;margin:4px 0;border:1px solid #ddd}
details.fold>.tablebox{max-height:28em;overflow:auto}
details.fold{margin:4px 0}details.fold>summary{cursor:pointer;font-size:13px;color:#0550ae}
table{border-collapse:collapse;font-size:12px;max-width:100%%}
td,th{border:1px solid #ccc;padding:2px 5px;text-align:left;vertical-align:top}
td{max-width:22em;overflow-wrap:break-word}td.n{text-align:right;white-space:nowrap}
th{background:#eee;position:sticky;top:0;z-index:1;overflow-wrap:break-word}
tr.note td{border-top:none;color:#444;font-size:11.5px;padding:0 6px 4px 18px;max-width:none}
.tablebox.full table{width:100%%}.tablebox.full td{max-width:34em}
tr.noted td{border-bottom:none}tr.note summary{cursor:pointer}tr.section td{background:#f3f6fa;font-size:12.5px;max-width:none}
dl.key{columns:2;column-gap:22px;font-size:11.5px;margin:4px 0;line-height:1.3}
dl.key>div{break-inside:avoid;margin:0 0 3px}dl.key dt{display:inline;font-weight:bold}
dl.key dd{display:inline;margin:0}dl.key dt::after{content:": "}
.figures{display:grid;grid-template-columns:repeat(6,minmax(0,1fr));gap:8px 14px;grid-auto-flow:dense}
figure{margin:4px 0;min-width:0;grid-column:span 2}figure.wide{grid-column:span 3}figure.full{grid-column:1/-1}
figure img{width:100%%;height:auto;display:block}figcaption{font-size:11.5px;color:#333}
figure.full img{width:auto;max-width:100%%}
p.note{color:#555;font-style:italic;margin:3px 0}p.tmeta{margin:2px 0 8px}
small a{overflow-wrap:anywhere}
@media print{body{max-width:none}nav.toc{display:none}
.tablebox,details.fold>.tablebox{overflow:visible;max-height:none;border:none}
table{font-size:8px}td{max-width:none;overflow-wrap:anywhere}td.n{white-space:normal}
td,th{padding:1px 3px}th{position:static;overflow-wrap:anywhere}figure{break-inside:avoid}
figure{grid-column:span 3}figure.wide,figure.full{grid-column:1/-1}}
""" % "\n".join(".verdict.%s{background:%s}" % kv for kv in VERDICT_COLOURS.items())

# Source columns shown with a unit: name -> formatter (the CSV keeps the number).
COLUMN_FORMATS = ((re.compile(r"(^|_)size_bytes$|^bytes_|_bytes_|_bytes$"), formatting.size),
                  (re.compile(r"^(comm_reduction|compute_efficiency)(_low|_high)?$"), formatting.percent))


class Document:
    def __init__(self, outdir):
        self.outdir = outdir
        self.blocks = []
        self.gallery = None
        self.folded = None    # figures added now are folded under this line
        self.csv_files = []
        os.makedirs(os.path.join(outdir, "tables"), exist_ok=True)

    def heading(self, level, text):
        self.blocks.append(("h", level, text))

    def para(self, text, fold=None):
        """A paragraph; fold: in the HTML, folded under that line (a long
        explanation the reader opens when needed); report.md shows it."""
        self.blocks.append(("p", text, fold))

    def note(self, text):
        """A remark in place of something absent (a figure without data)."""
        self.blocks.append(("note", text))

    def bullets(self, items):
        if items:
            self.blocks.append(("ul", list(items)))

    def key(self, items, columns=2):
        """A key: [(term, definition)] (Markdown), in columns in the HTML,
        a list in report.md."""
        if items:
            self.blocks.append(("key", list(items), columns))

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

    def table(self, df, name, columns=None, caption=None, full=False, notes=None, sections=None):
        """Show df (optionally a subset/renaming {col: header}); write the
        full table to tables/<name>.csv.  A column with no value in any row
        is left out, and one (but the first) with the same value in every
        row (of several) is said once under the table instead.  full: every row shown, never
        folded (the claims); notes: a Markdown line per row shown under it
        ('' for none); sections: a Markdown line per row, shown once above
        the rows that share it (the claim and how it is read, above its
        platforms)."""
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
        same = []
        if len(cells) > 2:
            # the first column names the rows (a group): always shown
            same = [j for j in keep if j > 0 and len({r[j] for r in cells}) == 1 and len(cells[0][j]) < 60]
            if len(same) >= len(keep) - 1:   # every column alike: the table as it is
                same = []
        if same:
            caption = "%sIn every row: %s." % (caption + " " if caption else "", "; ".join(
                "%s %s" % (heads[j], cells[0][j]) for j in same))
            keep = [j for j in keep if j not in same]
        if keep and len(keep) < len(cols):
            heads = [heads[j] for j in keep]
            cells = [[r[j] for j in keep] for r in cells]
        notes = [str(n) if n and not formatting.missing(n) else "" for n in notes] if notes is not None else None
        sections = [str(s) for s in sections] if sections is not None else None
        self.blocks.append(("table", heads, cells, csv, caption, full, notes, sections))

    def figure(self, filename, caption, clipped=None):
        """A figure; clipped: the texts of it that reached outside the
        image (plotting.CLIPPED), marked on it for the reader and the tests.
        Inside a gallery (begin_gallery) it waits for the gallery's end."""
        block = ("fig", filename, caption, list(clipped or []), self.folded)
        (self.gallery if self.gallery is not None else self.blocks).append(block)

    def fold_figures(self, summary=None):
        """Figures from here on (until fold_figures() again) are folded in
        the HTML under the line summary: many figures of one kind, a click
        away, keep the page short."""
        self.folded = summary

    def begin_gallery(self):
        """Figures from here on are shown together at end_gallery: several
        short sections' figures share rows instead of a row each."""
        self.gallery = []

    def end_gallery(self, heading):
        figs, self.gallery = self.gallery or [], None
        if figs:
            self.heading(3, heading)
            self.blocks.extend(figs)

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
            elif b[0] == "key":
                out.append("\n".join("- **%s**: %s" % kv for kv in b[1]))
            elif b[0] == "table":
                if b[4]:
                    out.append(b[4] + "\n")
                out.append(_md_table(b[1], b[2], b[6], b[7]) + "\n\n_(full table: [%s](%s))_" % (b[3], b[3]))
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

        fold = [None]

        def flush_figures():
            if figs:
                box = "<div class='figures'>%s</div>" % "".join(figs)
                if fold[0]:
                    box = ("<details class='fold'><summary>%s (%d figure%s: show)</summary>%s"
                           "</details>" % (_inline(fold[0]), len(figs), "" if len(figs) == 1
                                           else "s", box))
                parts.append(box)
                figs.clear()

        for i, b in enumerate(self.blocks):
            if b[0] == "fig":
                folded = b[4] if len(b) > 4 else None
                if figs and folded != fold[0]:
                    flush_figures()
                fold[0] = folded
                figs.append(self._html_figure(b[1], b[2], b[3]))
                continue
            flush_figures()
            if b[0] == "h":
                if b[1] >= 2 and not toc_done:
                    parts.append(_toc(self.blocks, ids))
                    toc_done = True
                parts.append("<h%d id='%s'>%s</h%d>" % (b[1], ids[i], _inline(b[2]), b[1]))
            elif b[0] == "p" and len(b) > 2 and b[2]:
                parts.append("<details class='fold'><summary>%s</summary><p>%s</p></details>"
                             % (_inline(b[2]), _inline(b[1])))
            elif b[0] == "p":
                parts.append("<p>%s</p>" % _inline(b[1]))
            elif b[0] == "note":
                parts.append("<p class='note'>%s</p>" % _inline(b[1]))
            elif b[0] == "headline":
                parts.append(_html_headline(b[1], b[2]))
            elif b[0] == "ul":
                parts.append("<ul>%s</ul>" % "".join("<li>%s</li>" % _inline(x) for x in b[1]))
            elif b[0] == "key":
                parts.append("<dl class='key' style='columns:%d'>%s</dl>" % (b[2], "".join(
                    "<div><dt>%s</dt><dd>%s</dd></div>" % (_inline(t), _inline(d)) for t, d in b[1])))
            elif b[0] == "table":
                parts.append(_html_table(*b[1:]))
        flush_figures()
        parts.append("</body></html>")
        return "\n".join(parts)

    def _html_figure(self, filename, caption, clipped=()):
        with open(os.path.join(self.outdir, filename), "rb") as f:
            png = f.read()
        # one panel a third of a row; two panels half a row; wider ones
        # (the verdict, one panel per rank count) a row of their own
        width = _png_width(png)
        cls = "full" if width > 700 else "wide" if width > 450 else ""
        return ("<figure%s%s><img alt='%s' src='data:image/png;base64,%s'>"
                "<figcaption>%s</figcaption></figure>"
                % (" class='%s'" % cls if cls else "",
                   " data-clipped='%s'" % html.escape("; ".join(clipped), quote=True) if clipped else "",
                   html.escape(caption, quote=True),
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


def _md_table(heads, cells, notes=None, sections=None):
    """A Markdown table; a row's note as a row of its own under it, in its
    first cell, and a section line as a row above the rows that share it."""
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    head = "| " + " | ".join(esc(h) for h in heads) + " |"
    sep = "|" + "|".join("---" for _ in heads) + "|"
    rows = []
    for i, r in enumerate(cells):
        if sections and (i == 0 or sections[i] != sections[i - 1]):
            rows.append("| " + " | ".join(["**%s**" % esc(sections[i])] + [""] * (len(heads) - 1)) + " |")
        rows.append("| " + " | ".join(esc(v) for v in r) + " |")
        if notes and notes[i]:
            rows.append("| " + " | ".join([esc("^ " + notes[i])] + [""] * (len(heads) - 1)) + " |")
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


def _html_table(heads, cells, csv, caption=None, full=False, notes=None, sections=None):
    """A table in its box, its caption above and the link to its CSV; a
    long one (not full) folded under a line saying what it holds."""
    head = "".join("<th>%s</th>" % html.escape(str(h)) for h in heads)
    rows = []
    for i, r in enumerate(cells):
        if sections and (i == 0 or sections[i] != sections[i - 1]):
            rows.append("<tr class='section'><td colspan='%d'>%s</td></tr>" % (len(heads), _inline(sections[i])))
        note = notes[i] if notes else ""
        rows.append("<tr%s>%s</tr>" % (" class='noted'" if note else "",
                                       "".join(_html_cell(v) for v in r)))
        if note and len(note) > NOTE_OPEN:
            # a long note: its start, the rest a click away
            cut = note.rfind(" ", 0, NOTE_OPEN - 20)
            rows.append("<tr class='note'><td colspan='%d'><details><summary>%s ...</summary>%s"
                        "</details></td></tr>" % (len(heads), _inline(note[:cut]), _inline(note)))
        elif note:
            rows.append("<tr class='note'><td colspan='%d'>%s</td></tr>" % (len(heads), _inline(note)))
    link = "<a href='%s'>%s</a>" % (html.escape(csv, quote=True), html.escape(csv))
    box = ("<div class='tablebox%s'><table><thead><tr>%s</tr></thead><tbody>%s</tbody></table></div>"
           % (" full" if full else "", head, "".join(rows)))
    # what every row shares and the CSV: one line under the table
    meta = "<p class='tmeta'><small>%sfull table: %s</small></p>" % (
        _inline(caption) + " " if caption else "", link)
    if len(cells) > LONG_TABLE_ROWS and not full:
        return ("<details class='fold'><summary>table of %d rows: %s (show)</summary>%s</details>%s"
                % (len(cells), html.escape(", ".join(str(h) for h in heads[:8])
                                           + (", ..." if len(heads) > 8 else "")), box, meta))
    return box + meta


def verdict_key_html(classes=None):
    """The key to the verdict colours (those in classes, else all)."""
    return "<p class='vkey'>Verdict colours: %s</p>" % "".join(
        "<span class='k'><span class='verdict %s'>&nbsp;</span> %s</span> " % (k, html.escape(t))
        for k, t in VERDICT_KEY if classes is None or k in classes)


def _html_headline(lines, rows):
    """rows: (claim, platform, value, paper, verdict, class[, why[,
    would_change]]): a why / would-change line under a row that has one."""
    if not rows:
        return "<div class='headline'>%s</div>" % "".join("<p>%s</p>" % _inline(x) for x in lines)
    body, classes = [], set()
    for row in rows:
        claim, platform, value, paper, verdict, cls = row[:6]
        classes.add(cls)
        extra = [(label, text) for label, text in zip(("why", "would change it"), row[6:8])
                 if text and not formatting.missing(text)]
        # why (and what would change it) folded under the claim's name
        why = ("<details class='why'><summary>why%s</summary>%s</details>"
               % (" / what would change it" if len(extra) > 1 else "",
                  "<br>".join("<i>%s</i>: %s" % (label, _inline(str(text))) for label, text in extra))
               if extra else "")
        body.append("<tr><td>%s%s</td><td>%s</td><td><b>%s</b></td><td>paper %s</td>"
                    "<td><span class='verdict %s'>%s</span></td></tr>"
                    % (html.escape(str(claim)), why, html.escape(str(platform)), html.escape(str(value)),
                       html.escape(str(paper)), html.escape(str(cls)), html.escape(str(verdict))))
    return ("<div class='headline'><p><b>Headline</b>: the papers' setting, a core per rank, "
            "a machine not busy, intervals over launches (or an exact value)</p>"
            "<div class='tablebox'><table><thead><tr><th>claim</th><th>platform</th>"
            "<th>measured</th><th>paper</th><th>verdict</th></tr></thead><tbody>%s</tbody>"
            "</table></div>%s</div>" % ("".join(body), verdict_key_html(classes)))


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
