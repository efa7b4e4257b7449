"""A report as a list of blocks, rendered to Markdown and to HTML (figures
inline as base64 PNG, so report.html is one self-contained file).  Every
table is also written as CSV under tables/ with full precision."""

import base64
import html
import math
import os
import re

import pandas as pd


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

    def bullets(self, items):
        if items:
            self.blocks.append(("ul", list(items)))

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
            self.para("_(no data for this table)_")
            return
        csv = self.csv(df, name)
        shown = df
        if columns:
            cols = [c for c in columns if c in df.columns]
            shown = df[cols].rename(columns={c: columns[c] for c in cols})
        self.blocks.append(("table", shown, csv, caption))

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
            elif b[0] == "ul":
                out.append("\n".join("- " + i for i in b[1]))
            elif b[0] == "table":
                out.append(_md_table(b[1]) + "\n\n_(full table: [%s](%s))_" % (b[2], b[2]))
            elif b[0] == "fig":
                out.append("![%s](%s)\n\n_%s_" % (b[2], b[1], b[2]))
            out.append("")
        return "\n".join(out)

    def html(self, title):
        parts = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>",
                 "<title>%s</title>" % html.escape(title),
                 "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
                 "table{border-collapse:collapse;font-size:12px}"
                 "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
                 "th{background:#eee}img{max-width:100%}</style>",
                 "</head><body>"]
        for b in self.blocks:
            if b[0] == "h":
                parts.append("<h%d>%s</h%d>" % (b[1], html.escape(b[2]), b[1]))
            elif b[0] == "p":
                parts.append("<p>%s</p>" % _inline(b[1]))
            elif b[0] == "ul":
                parts.append("<ul>%s</ul>" % "".join("<li>%s</li>" % _inline(i) for i in b[1]))
            elif b[0] == "table":
                parts.append(_html_table(b[1]))
                parts.append("<p><small>full table: <a href='%s'>%s</a></small></p>"
                             % (html.escape(b[2]), html.escape(b[2])))
            elif b[0] == "fig":
                with open(os.path.join(self.outdir, b[1]), "rb") as f:
                    data = base64.b64encode(f.read()).decode("ascii")
                parts.append("<figure><img alt='%s' src='data:image/png;base64,%s'>"
                             "<figcaption>%s</figcaption></figure>"
                             % (html.escape(b[2], quote=True), data, html.escape(b[2])))
        parts.append("</body></html>")
        return "\n".join(parts)


def fmt(v):
    """Table cell text: 4 significant digits for floats, '-' for missing."""
    if v is None:
        return "-"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if v.is_integer() and abs(v) < 1e15:
            return "%d" % v     # byte counts: 12288, not 1.229e+04
        return "%.4g" % v
    try:
        if pd.isna(v):
            return "-"
    except (TypeError, ValueError):
        pass
    return str(v)


def _cell_md(v):
    return fmt(v).replace("|", "\\|").replace("\n", " ")


def _md_table(df):
    head = "| " + " | ".join(str(c) for c in df.columns) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    rows = ["| " + " | ".join(_cell_md(v) for v in r) + " |"
            for r in df.itertuples(index=False, name=None)]
    return "\n".join([head, sep] + rows)


def _html_table(df):
    head = "".join("<th>%s</th>" % html.escape(str(c)) for c in df.columns)
    rows = "".join("<tr>%s</tr>" % "".join("<td>%s</td>" % html.escape(fmt(v)) for v in r)
                   for r in df.itertuples(index=False, name=None))
    return "<table><tr>%s</tr>%s</table>" % (head, rows)


def _inline(text):
    """Escape, then the two Markdown marks the report uses: **bold** and `code`."""
    t = html.escape(text)
    t = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", t)
    t = re.sub(r"`(.+?)`", r"<code>\1</code>", t)
    t = re.sub(r"(?<!\w)_(.+?)_(?!\w)", r"<i>\1</i>", t)
    return t
