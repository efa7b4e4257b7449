"""The archive contract, docs/archive-schema.json: every group, dataset,
compound column and attribute reducerbench's writers may produce, with its
type, when it is written, its units and meaning, and for the readers which
ones they require and what values they accept.  The readers (validate.py,
load.py) take their lists from here, never from a copy of their own;
results/README.md shows the same tables (markdown_tables(), checked by
tests/archive/schema_doc.sh); tests/archive/schema_writers.sh checks the
programs' archives against it (unknown()).

Found beside the package: ../../docs/ in the source tree, ../ where make
install puts both ($(pkgdatadir))."""
import functools
import json
import os
import re

_HERE = os.path.dirname(os.path.abspath(__file__))
_PLACES = (os.path.join(_HERE, "..", "..", "docs", "archive-schema.json"),
           os.path.join(_HERE, "..", "archive-schema.json"))
SCALAR_TYPES = ("str", "int", "uint", "float")


@functools.lru_cache(maxsize=None)
def load():
    """The schema as a dict (read once)."""
    for path in _PLACES:
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return json.load(f)
    raise FileNotFoundError("the archive schema (archive-schema.json) is in none of: "
                            + ", ".join(os.path.normpath(p) for p in _PLACES))


def objects():
    return load()["objects"]


def _split(obj):
    """(path, kind, name): kind "@" attribute, ":" column, "" the object."""
    m = re.fullmatch(r"([^@:]*)([@:])(.*)", obj)
    return (m.group(1) or "/", m.group(2), m.group(3)) if m else (obj, "", "")


def attributes(path):
    """{name: entry} of the attributes of the object at path (exact names)."""
    return {n: e for e in objects() for p, k, n in [_split(e["object"])]
            if p == path and k == "@" and "<" not in n}


def columns(path):
    """{column: entry} of the compound dataset at path, in schema order."""
    return {n: e for e in objects() for p, k, n in [_split(e["object"])] if p == path and k == ":"}


def root_scalars():
    """Names of the root attributes that hold one value."""
    return tuple(n for n, e in attributes("/").items() if e["type"] in SCALAR_TYPES)


def required(entries):
    return tuple(n for n, e in entries.items() if e.get("required"))


def checked(entries, check):
    """Names whose values readers check as `check` (the schema's "check")."""
    return tuple(n for n, e in entries.items() if e.get("check") == check)


def number_checks(entries):
    """(name, whole, least) of the entries checked as "whole number >= N"
    or "number >= N"."""
    out = []
    for n, e in entries.items():
        m = re.fullmatch(r"(whole number|number) >= (-?\d+)", e.get("check", ""))
        if m:
            out.append((n, m.group(1) == "whole number", int(m.group(2))))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def _patterns():
    """(compiled object pattern, entry): <...> and NAME stand for one name."""
    out = []
    for e in objects():
        parts = re.split(r"(<[^>]*>)", e["object"])
        rx = "".join(r"[^/@:]+" if p.startswith("<") else re.escape(p) for p in parts)
        out.append((re.compile(rx + r"\Z"), e))
    return tuple(out)


def entry_for(obj):
    """The schema entry an actual object name ("/micro/samples/3@opt_seed")
    falls under, or None."""
    for rx, e in _patterns():
        if rx.match(obj):
            return e
    return None


def markdown_tables():
    """{section: [table lines]}: the tables results/README.md shows."""
    out = {}
    for e in objects():
        line = "| `%s` | %s | %s | %s | %s |" % (e["object"], e["type"], e["when"], e["units"],
                                                e["description"])
        out.setdefault(e["section"], []).append(line)
    return out
