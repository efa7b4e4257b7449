#!/usr/bin/python3
"""schema_doc.py [--write] [README]: results/README.md's tables of objects
(| object | type | when | units | description |) are the archive schema's
(docs/archive-schema.json), section by section, row for row.  Without
--write, print each difference and exit 1 when there is one; with
--write, replace the tables' rows by the schema's (after editing the
schema, so the reader-facing text follows it)."""
import os
import re
import sys

top = os.environ.get("top_srcdir", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(top, "analysis"))
from rbanalysis import schema  # noqa: E402

HEADER = "| object | type | when | units | description |"


def render(lines, tables):
    """The README's lines with each object table's rows replaced by the
    schema's rows of its section; (new lines, sections seen)."""
    out, section, seen, i = [], None, [], 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip()
        out.append(line)
        i += 1
        if line.strip() == HEADER and i < len(lines) and lines[i].startswith("|---"):
            out.append(lines[i])
            i += 1
            while i < len(lines) and lines[i].startswith("|"):
                i += 1
            out.extend(tables.get(section, []))
            seen.append(section)
    return out, seen


def main(argv):
    write = "--write" in argv
    args = [a for a in argv if a != "--write"]
    path = args[0] if args else os.path.join(top, "results", "README.md")
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    tables = schema.markdown_tables()
    new, seen = render(lines, tables)
    missing = [s for s in tables if s not in seen]
    if write:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(new))
        print("%s: %d tables from the schema" % (path, len(seen)))
        return 0
    problems = ["the schema's section '%s' has no table in %s" % (s, path) for s in missing]
    old_rows = [l for l in lines if re.match(r"\| `", l) and l not in new]
    new_rows = [l for l in new if re.match(r"\| `", l) and l not in lines]
    problems += ["%s has a row the schema does not: %s" % (path, l[:160]) for l in old_rows]
    problems += ["%s lacks the schema's row: %s" % (path, l[:160]) for l in new_rows]
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print("%s: %d tables, every row the schema's" % (path, len(seen)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
