#!/usr/bin/python3
"""Open an rb-report report.html in headless Chromium and check what a
reader sees.

usage: browser_check.py [--chromium PATH] [--width PX] [--print] [--max-height PX]
                        [--screenshot PNG] REPORT_HTML

A copy of the page, with a script added that measures it once loaded, is
opened at a viewport WIDTH px wide (default 1280); the script's findings
come back through --dump-dom.  Checks (each failure is printed; exit 1 if
any, 0 otherwise):
  - every figure (img) has loaded: complete, naturalWidth > 0;
  - the page is no wider than the viewport (document scrollWidth <= WIDTH);
  - no element is wider than its own box (scrollWidth > clientWidth) or
    reaches past the viewport's right edge, unless it is inside (or is) a
    box that scrolls (overflow-x auto or scroll);
  - no Markdown syntax is left in the text (outside code): *word*, **word**,
    _word_, backticks, [text](link);
  - a contents list exists and every in-page link (#anchor) has its target;
  - the headline is in its own box and every verdict there carries one of
    the verdict classes (no verdict only where the box says "no number");
  - every table with more than 15 rows keeps its header in view (th
    position: sticky; on paper the header repeats on each page instead);
  - every figure has a caption;
  - no table and no figure is wider than the box it sits in (a table that
    needs a scroll bar hides columns), and no figure is marked by rb-report
    as having text cut (data-clipped: a title, label or legend reaching
    outside the image);
  - with --max-height, the page is at most that tall.
With --print, the page's print style (@media print) is applied on screen,
at WIDTH (718 px: A4 at 96 dpi less 1 cm margins, unless given): nothing
scrolls on paper, so every table must fit the page.
With --screenshot, the whole page is also saved as a PNG (WIDTH wide).
Prints the page height and the number of figures and tables."""

import argparse
import html
import json
import os
import re
import subprocess
import sys
import tempfile

VERDICT_CLASSES = ("meets", "below", "equivalent", "not-equivalent", "inconclusive", "median-only",
                   "missing")

# Runs in the page once everything has loaded; leaves its findings as JSON
# in <pre id="rb-browser-check"> (added after measuring, so it moves nothing).
PROBE = r"""
<script>
window.addEventListener("load", () => {
  const W = %(width)d, out = {errors: []};
  const err = (m) => out.errors.push(m);
  const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
      (e.className && typeof e.className === "string" ? "." + e.className.split(" ").join(".") : "") +
      " '" + (e.textContent || "").trim().slice(0, 60) + "'";
  const scrolls = (e) => ["auto", "scroll"].includes(getComputedStyle(e).overflowX);
  const inScrollBox = (e) => { for (let a = e; a && a !== document.body; a = a.parentElement)
                                 if (scrolls(a)) return true; return false; };
  const de = document.documentElement;
  out.height = de.scrollHeight; out.width = de.scrollWidth; out.viewport = innerWidth;
  if (de.scrollWidth > W) err("page is " + de.scrollWidth + " px wide, viewport " + W + " px");
  const imgs = [...document.images];
  out.figures = imgs.length; out.tables = document.querySelectorAll("table").length;
  for (const i of imgs)
    if (!i.complete || i.naturalWidth === 0) err("figure did not load: " + (i.alt || i.src.slice(0, 60)));
  for (const f of document.querySelectorAll("figure"))
    if (!f.querySelector("figcaption") || !f.querySelector("figcaption").textContent.trim())
      err("figure without a caption: " + name(f));
  let overflows = 0;
  for (const e of document.body.querySelectorAll("*")) {
    if (["SCRIPT", "STYLE"].includes(e.tagName) || inScrollBox(e)) continue;
    const wide = e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0 &&
                 getComputedStyle(e).overflowX !== "hidden";
    const past = e.getBoundingClientRect().right > W + 1;
    if ((wide || past) && overflows++ < 10)
      err((wide ? "wider than its box (" + e.scrollWidth + " > " + e.clientWidth + " px)"
                : "reaches past the viewport (right edge " +
                  Math.round(e.getBoundingClientRect().right) + " px)") + ": " + name(e));
  }
  if (overflows > 10) err("... and " + (overflows - 10) + " more overflowing elements");
  // a table or a figure wider than its box: a scroll bar hides part of it;
  // folded tables (details) are opened to be measured, as a reader opens them
  for (const d of document.querySelectorAll("details")) d.open = true;
  for (const t of document.querySelectorAll("table, figure img")) {
    const box = t.parentElement, w = t.getBoundingClientRect().width;
    if (box.clientWidth > 0 && (w > box.clientWidth + 1 || box.scrollWidth > box.clientWidth + 1))
      err((t.tagName === "TABLE" ? "table" : "figure") + " wider than its box (" + Math.round(w) +
          " > " + box.clientWidth + " px): " + name(t.tagName === "TABLE" ? t : t.closest("figure")).slice(0, 120));
  }
  for (const f of document.querySelectorAll("figure[data-clipped]"))
    err("figure with text cut (" + f.getAttribute("data-clipped") + "): " + name(f).slice(0, 100));
  if (%(max_height)d && out.height > %(max_height)d)
    err("page is " + out.height + " px tall, more than " + %(max_height)d + " px");
  const marks = [[/(^|[^\w*\\])\*\*?[^\s*][^*\n]*?\*\*?(?![\w*])/, "*emphasis*"],
                 [/(^|[^\w])_[^_\s][^_\n]*?_(?!\w)/, "_emphasis_"],
                 [/`/, "backtick"], [/\[[^\]\n]+\]\([^)\n]+\)/, "[text](link)"]];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let left = 0;
  for (let n; (n = walk.nextNode());) {
    if (n.parentElement.closest("code, pre, script, style")) continue;
    for (const [re, what] of marks) {
      const m = n.textContent.match(re);
      if (m && left++ < 10) err("Markdown left as text (" + what + "): '" + m[0].trim().slice(0, 60) +
                                "' in " + name(n.parentElement));
    }
  }
  const toc = document.querySelector("nav.toc");
  if (!toc || toc.querySelectorAll("a[href^='#']").length < 3) err("no contents list (nav.toc with links)");
  for (const a of document.querySelectorAll("a[href^='#']"))
    if (!document.getElementById(decodeURIComponent(a.getAttribute("href").slice(1))))
      err("in-page link without a target: " + a.getAttribute("href"));
  const box = document.querySelector(".headline");
  if (!box) err("no headline box (.headline)");
  else {
    const v = box.querySelectorAll(".verdict");
    // no verdict only where the box says why there is no number
    if (!v.length && !/^\s*Headline: no number/.test(box.textContent))
      err("the headline box shows neither a verdict (.verdict) nor why there is no number");
    for (const e of v)
      if (!%(classes)s.some((c) => e.classList.contains(c))) err("verdict without a verdict class: " + name(e));
    out.verdicts = [...v].map((e) => [...e.classList].join(" "));
  }
  for (const t of %(printed)s ? [] : document.querySelectorAll("table"))
    if (t.rows.length > 16) {
      const th = t.querySelector("thead th");
      if (!th || getComputedStyle(th).position !== "sticky")
        err("long table (" + t.rows.length + " rows) without a sticky header: " + name(t).slice(0, 80));
    }
  const pre = document.createElement("pre");
  pre.id = "rb-browser-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def chromium(binary, width, height, *args):
    return subprocess.run([binary, "--headless=new", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", "--window-size=%d,%d" % (width, height),
                           "--virtual-time-budget=20000"] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)


def measure(binary, report, width, printed=False, max_height=0):
    """The probe's findings for report (a copy with PROBE added, beside it
    so that relative links resolve); printed: with its print style."""
    page = open(report, encoding="utf-8").read()
    if printed:
        page = page.replace("@media print", "@media all")
    probe = PROBE % {"width": width, "classes": json.dumps(list(VERDICT_CLASSES)),
                     "printed": json.dumps(printed), "max_height": max_height or 0}
    if "</body>" not in page:
        return {"errors": ["report.html has no </body>"]}
    fd, copy = tempfile.mkstemp(suffix=".html", prefix=".probe-", dir=os.path.dirname(report))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(page.replace("</body>", probe + "</body>", 1))
        r = chromium(binary, width, 900, "--dump-dom", "file://" + os.path.abspath(copy))
    finally:
        os.remove(copy)
    m = re.search(r'<pre id="rb-browser-check">(.*?)</pre>', r.stdout, re.S)
    if not m:
        return {"errors": ["chromium returned no measurement (exit %d): %s"
                           % (r.returncode, r.stderr.strip()[-500:])]}
    return json.loads(html.unescape(m.group(1)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("report")
    p.add_argument("--chromium", default="chromium")
    p.add_argument("--width", type=int)
    p.add_argument("--print", action="store_true", dest="printed")
    p.add_argument("--screenshot")
    p.add_argument("--max-height", type=int, default=0)
    a = p.parse_args()
    a.width = a.width or (718 if a.printed else 1280)
    res = measure(a.chromium, a.report, a.width, a.printed, a.max_height)
    for e in res["errors"]:
        print("FAIL: " + e)
    if "height" in res:
        print("report.html %sat %d px: %d px tall, %d px wide, %d figures, %d tables, verdicts: %s"
              % ("printed " if a.printed else "", a.width, res["height"], res["width"], res["figures"], res["tables"],
                 ", ".join(res.get("verdicts", [])) or "-"))
    if a.screenshot and "height" in res:
        chromium(a.chromium, a.width, res["height"], "--screenshot=" + os.path.abspath(a.screenshot),
                 "file://" + os.path.abspath(a.report))
        if not os.path.isfile(a.screenshot):
            print("FAIL: no screenshot written to " + a.screenshot)
            return 1
    return 1 if res["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
