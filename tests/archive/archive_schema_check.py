#!/usr/bin/python3
"""Check result files against the archive schema, docs/archive-schema.json
(the one home of the archive's rules; results/README.md shows its tables).

  archive_schema_check.py docs/archive-schema.json FILE.h5...

Every object, attribute and compound column in a file must be documented
with the documented type, and every documented object required in that
situation (the `when` column) must be present.  Merged archives
(rb-archive merge) are checked against the merged table, and each run in
/runs/<name> against the run tables.  Exit 0 if all files conform, 1
otherwise (each problem printed).
"""
import json
import re
import sys

import h5py
import numpy as np

PLACEHOLDERS = {"<row>": r"\d+", "<key>": r"[A-Za-z0-9_]+", "<name>": r"[^/]+"}


class Entry:
    def __init__(self, spec, type_, when):
        self.spec, self.type, self.when = spec, type_, when
        m = re.match(r"^([^@:]*)(?:([@:])(.*))?$", spec)
        self.obj, sep, self.member = m.group(1), m.group(2), m.group(3)
        self.kind = {"@": "attr", ":": "column", None: "object"}[sep]
        self.obj_re = re.compile("^" + self._regex(self.obj) + "$")
        self.member_re = re.compile("^" + self._regex(self.member) + "$") if self.member else None

    @staticmethod
    def _regex(s):
        out = re.escape(s)
        for k, v in PLACEHOLDERS.items():
            out = out.replace(re.escape(k), v)
        return out

    def matches(self, kind, obj, member=None):
        return (kind == self.kind and self.obj_re.match(obj) is not None
                and (member is None or self.member_re.match(member) is not None))


def parse_schema(path):
    """Run entries and merged-archive entries of the schema."""
    with open(path, encoding="utf-8") as f:
        objects = json.load(f)["objects"]
    run, merged = [], []
    for o in objects:
        e = Entry(o["object"], o["type"], "always" if o["when"] == "merged" else o["when"])
        (merged if o["when"] == "merged" else run).append(e)
    if not run or not merged:
        raise SystemExit("archive_schema_check: no run or no merged-archive objects in %s" % path)
    return run, merged


def type_ok(type_, value):
    """Does an attribute value, dataset or column dtype match the documented type?"""
    t = type_.split()[0] if type_.startswith("dataset") is False else type_
    if isinstance(value, h5py.Group):
        return t == "group"
    if isinstance(value, h5py.Dataset):
        if not type_.startswith("dataset "):
            return False
        desc = type_[len("dataset "):]
        base = desc.split("[")[0]
        ndim = len(desc.split("[")[1].rstrip("]").split(",")) if "[" in desc else 0
        if base == "str":
            return h5py.check_string_dtype(value.dtype) is not None and value.shape == ()
        if base == "compound":
            return value.dtype.names is not None and value.ndim == ndim
        return value.dtype == np.dtype(base) and value.ndim == ndim
    if isinstance(value, np.dtype):  # compound column
        if t.startswith("char["):
            return value.kind == "S" and value.itemsize == int(t[5:-1])
        return value == np.dtype(t)
    # attribute value
    if t == "any":
        return True
    if t == "str":
        return isinstance(value, str)
    if t == "int":
        return isinstance(value, (np.signedinteger, int)) and not isinstance(value, bool)
    if t == "uint":
        return isinstance(value, np.unsignedinteger)
    if t == "float":
        return isinstance(value, np.floating)
    if t in ("str[]", "int[]"):
        if isinstance(value, h5py.Empty):
            return True
        if not isinstance(value, np.ndarray) or value.ndim != 1:
            return False
        return value.dtype.kind == "O" if t == "str[]" else value.dtype.kind == "i"
    raise ValueError("unknown documented type %r" % type_)


def items_of(root):
    """(kind, path, member, value) for every object, attribute and column."""
    out = [("object", "/", None, root)]
    root.visititems(lambda name, obj: out.append(("object", "/" + name, None, obj)) and None)
    more = []
    for kind, path, _, obj in out:
        for k in obj.attrs:
            more.append(("attr", path, k, obj.attrs[k]))
        if isinstance(obj, h5py.Dataset) and obj.dtype.names:
            for c in obj.dtype.names:
                more.append(("column", path, c, obj.dtype.fields[c][0]))
    return out + more


def display(path, kind, member):
    return path + ({"attr": "@", "column": ":"}.get(kind, "") + member if member else "")


def required(e, ctx):
    w = e.when
    if w == "always":
        return True
    if w == "hwloc":
        return ctx["hwloc"]
    if w == "micro":
        return ctx["micro"]
    if w == "wordlm":
        return ctx["wordlm"]
    if w == "embedlm":
        return ctx["embedlm"]
    if w == "rows":
        return ctx["rows"] > 0
    if w == "option":
        return False
    if w == "simulated":
        return ctx["simulated"]
    if w == "simulated micro":
        return ctx["simulated"] and ctx["micro"]
    return w == ctx["tool"]  # a benchmark's own group, e.g. rb_train


def expand(e, ctx):
    """Concrete paths a required entry stands for (<row> -> every row)."""
    if "<row>" in e.obj:
        return [e.obj.replace("<row>", str(i)) for i in range(ctx["rows"])]
    if "<" in e.obj:
        return []
    return [e.obj]


def check_tree(root, entries, label, merged=False):
    errors = []
    items = items_of(root)
    tool = root.attrs.get("tool", "")
    nrows = 0
    if "micro/results" in root:
        nrows = root["micro/results"].shape[0]
    model = root["train"].attrs.get("model", "") if tool == "rb_train" and "train" in root else ""
    ctx = {"hwloc": int(root["topology"].attrs.get("available", 0)) == 1 if "topology" in root else False,
           "micro": tool == "rb_micro", "rows": nrows, "tool": tool,
           "simulated": int(root.attrs.get("simulated", 0)) == 1,
           "wordlm": (model.decode() if isinstance(model, bytes) else model) == "wordlm",
           "embedlm": (model.decode() if isinstance(model, bytes) else model) == "embedlm"}
    for kind, path, member, value in items:
        if kind == "object" and path == "/":
            continue
        # Inside a merged file, /runs/<name> and below follow the run schema.
        if merged and path.startswith("/runs/") and (path.count("/") > 2 or kind != "object"):
            continue
        docs = [e for e in entries if e.matches(kind, path, member)]
        if not docs:
            errors.append("%s: %s is not in the archive schema" % (label, display(path, kind, member)))
            continue
        if not any(type_ok(e.type, value) for e in docs):
            errors.append("%s: %s has type %s, documented %s" % (
                label, display(path, kind, member),
                getattr(value, "dtype", type(value).__name__), docs[0].type))
    have = {(k, p, m) for k, p, m, _ in items}
    for e in entries:
        if not required(e, ctx):
            continue
        for obj in expand(e, ctx):
            if (e.kind, obj, e.member) not in have:
                errors.append("%s: documented %s is missing" % (label, display(obj, e.kind, e.member)))
    return errors


def check_file(path, run_entries, merged_entries):
    errors = []
    with h5py.File(path, "r") as f:
        if f.attrs.get("tool") == "rb-archive":
            errors += check_tree(f, merged_entries, path, merged=True)
            for name in f["runs"]:
                g = f["runs"][name]
                entries = run_entries + [Entry("/@source_file", "str", "always")]
                errors += check_tree(g, entries, "%s:/runs/%s" % (path, name))
        else:
            errors += check_tree(f, run_entries, path)
    return errors


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    run, merged = parse_schema(argv[1])
    errors = []
    for path in argv[2:]:
        errors += check_file(path, run, merged)
    for e in errors:
        print(e, file=sys.stderr)
    if not errors:
        print("archive_schema_check: %d file(s) conform to %s (%d run entries)"
              % (len(argv) - 2, argv[1], len(run)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
