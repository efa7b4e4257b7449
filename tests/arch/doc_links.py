#!/usr/bin/python3
"""Every reference from a document to another document, or to a file of the
tree, resolves.

Read from every .md file of the tree (README.md, docs/, results/, analysis/
..., not build folders):
  - a Markdown link [text](target) that is not a URL names a file or folder
    that exists (relative to the document), and its #anchor, if any, is the
    GitHub slug of a heading of the target;
  - a named section, `FILE.md "Section"`, `FILE.md, "Section"` or
    `FILE.md, *Section*` (the house styles for "see that section"), or a
    link to FILE.md followed by one, names a heading of FILE.md that
    contains the quoted text (FILE relative to the document, else to the
    top);
  - in the reference documents (all but the dated logs under
    docs/measurements/, which record the tree of their day), a path of the
    tree (src/..., docs/..., benchmarks/..., tests/..., jobscripts/...,
    analysis/..., results/..., m4/...) exists, as written or as the source
    of a program the build makes from it (X.c, X.sh, X.py, X.in).
The same checks hold for the dated logs' links and named sections: a log
is not edited, so a heading or file it names must not be renamed away.
And nothing is unfindable: docs/README.md, the index, links every document
of docs/ and every entry of docs/measurements/.

Usage: doc_links.py [TOP_SRCDIR]  (default: $top_srcdir, else .); exits 1
with a FAIL: line per broken reference.
"""
import glob
import os
import re
import sys

SKIP_DIRS = {".git", "build", "autom4te.cache", "build-aux"}
TREE_ROOTS = ("src", "docs", "benchmarks", "tests", "jobscripts", "analysis",
              "results", "m4")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
SECTION = re.compile(r"([\w./-]+\.md)(?:\]\([^)\s]*\))?`?\)?,?\s+(?:\"([^\"\n]+)\"|\*([^*]+)\*)")
TREE_PATH = re.compile(r"(?<![\w./$-])((?:%s)/[\w./+*-]*[\w/*])" % "|".join(TREE_ROOTS))
# What a path mentioned in prose may be besides a file as written: the
# source of a program or script the build makes, or a template.
SOURCE_SUFFIXES = ("", ".c", ".sh", ".py", ".in", ".cu")
# Paths that a run or the build writes, not files of the tree.
GENERATED = re.compile(r"^(results/(?!README\.md)|benchmarks/rb_|analysis/rb-\w+$|"
                       r"benchmarks/harness/rb_gitrev\.h)")
# Placeholders (src/reducer_X.c, src/cuda/X_nccl.c) and other projects' files that a document
# names as theirs (SimGrid's source tree).
NOT_OURS = re.compile(r"(_X\b|/X\b|/X_|^src/smpi/)")


def markdown_files(top):
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS
                         and not d.startswith("build") and not d.startswith("."))
        if os.path.relpath(folder, top) == "results":
            dirs[:] = []   # runs' outputs (rb-report's report.md), not documents
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(folder, name)


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped,
    spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def headings(path):
    """The headings of a Markdown file, outside fenced code blocks, and the
    labels of list items ("- Shared data: ..."), which documents name as
    sections too."""
    found = []
    with open(path, encoding="utf-8") as f:
        for line in strip_code_blocks(f.read()).split("\n"):
            if line.startswith("#"):
                found.append(line.lstrip("#").strip())
            elif re.match(r"^[-*] [^:]{1,60}:", line):
                found.append(line[2:].split(":")[0].strip())
    return found


def strip_code_blocks(text):
    """The text with fenced code blocks blanked (line numbers kept): a
    shell comment in a block is not a heading, nor a link."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
            out.append("")
        else:
            out.append("" if fenced else line)
    return "\n".join(out)


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def check_link(top, doc, target):
    """None if the link resolves, else why not."""
    path, _, anchor = target.partition("#")
    full = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
    if not os.path.exists(full):
        return "no such file %s" % os.path.relpath(full, top)
    if anchor:
        if not full.endswith(".md"):
            return "an anchor into a file that is not Markdown"
        if anchor not in {slug(h) for h in headings(full)}:
            return "no heading of %s has the anchor #%s" % (os.path.relpath(full, top), anchor)
    return None


def check_section(top, doc, name, section):
    """None if a file of that name, beside the document or from the top
    (a reader of docs/ takes README.md for the top one too), has a heading
    holding the section's name."""
    tried = []
    for base in (os.path.dirname(doc), top, os.path.join(top, "docs")):
        full = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(full) and full not in tried:
            if any(section.lower() in h.lower() for h in headings(full)):
                return None
            tried.append(full)
    if not tried:
        return "no such file %s" % name
    return "no heading of %s contains \"%s\"" % (
        " or ".join(os.path.relpath(t, top) for t in tried), section)


def check_tree_path(top, path):
    path = path.rstrip("/.")
    if GENERATED.match(path) or NOT_OURS.search(path):
        return None
    if "*" in path:
        return None if glob.glob(os.path.join(top, path)) else "nothing matches %s" % path
    for suffix in SOURCE_SUFFIXES:
        if os.path.exists(os.path.join(top, path + suffix)):
            return None
    return "no such file or folder %s" % path


def check_document(top, doc):
    rel = os.path.relpath(doc, top)
    with open(doc, encoding="utf-8") as f:
        raw = f.read()
    text = strip_code_blocks(raw)
    problems = []
    for m in LINK.finditer(text):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):
            continue
        why = check_link(top, doc, target)
        if why:
            problems.append("%s:%d: link (%s): %s" % (rel, line_of(text, m.start()), target, why))
    for m in SECTION.finditer(text):
        section = " ".join((m.group(2) or m.group(3)).split())
        why = check_section(top, doc, m.group(1), section)
        if why:
            problems.append("%s:%d: section %s \"%s\": %s"
                            % (rel, line_of(text, m.start()), m.group(1), section, why))
    if not rel.startswith("docs/measurements/"):
        for m in TREE_PATH.finditer(raw):
            why = check_tree_path(top, m.group(1))
            if why:
                problems.append("%s:%d: %s" % (rel, line_of(raw, m.start()), why))
    return problems


def check_index(top):
    """The entries of docs/ and docs/measurements/ that docs/README.md
    does not link."""
    index = os.path.join(top, "docs", "README.md")
    if not os.path.isfile(index):
        return ["docs/README.md: no index of the documents"]
    with open(index, encoding="utf-8") as f:
        linked = {os.path.normpath(t.partition("#")[0].rstrip("/"))
                  for t in LINK.findall(strip_code_blocks(f.read()))}
    wanted = [n for n in os.listdir(os.path.join(top, "docs"))
              if n.endswith(".md") and n != "README.md"]
    meas = os.path.join(top, "docs", "measurements")
    if os.path.isdir(meas):
        wanted += ["measurements/" + n for n in os.listdir(meas)]
    return ["docs/README.md: %s is not in the index" % n for n in sorted(wanted)
            if n not in linked and os.path.join(n, "README.md") not in linked]


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("top_srcdir", ".")
    if not top or not os.path.isfile(os.path.join(top, "README.md")) \
            or not os.path.isdir(os.path.join(top, "docs")):
        print("FAIL: %r is not the top of the source tree (no README.md and docs/)" % top)
        return 1
    docs = list(markdown_files(top))
    problems = [p for doc in docs for p in check_document(top, doc)] + check_index(top)
    for p in problems:
        print("FAIL: " + p)
    if problems:
        return 1
    print("PASS: the links, named sections and paths of %d documents resolve" % len(docs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
