#!/usr/bin/python3
"""The include graph and the call graph of src/ and benchmarks/ have no
circle and no edge into a room its room may not use.

Read from the #include "..." lines of every .c, .h and .cu file.  A module
is a file name without its extension (foo.c, foo.h and foo.cu are one
module), so foo.c including bar.h while bar.c includes foo.h is a circle
even though no header includes itself.

Rooms (docs/architecture.md): the library src/, the harness
benchmarks/harness/, the neural-network library benchmarks/nn/, and the
programs, one folder each under benchmarks/.  ALLOWED says which rooms a
room may include and call besides its own: the harness the library; nn
the library only (not the harness, not a program: it is a library of its
own under rb_train); a program the library and the harness, and rb_train
(benchmarks/train/) nn too.  A program never includes or calls another
program's files, and nothing includes or calls a room above it.

Quoted includes resolve as the compiler resolves them: the including
file's folder first, then the -I folders of Makefile.am (src/,
benchmarks/).  An include that resolves to no file of the tree fails the
test, unless it is a header the build generates.

Calls: a file calls another when it calls a function (not static) that
the other defines, found by name in the text without comments and
strings.  A name the calling file defines itself is its own (device_none.c
and device_cuda.c define the same functions, for builds with and without
CUDA).  The same rooms hold for calls, and the module graph of calls
has no circle either (core.c once called sparse.c, which called back
into core.c for its allocator).

Public headers: the library's face is the headers src/local.mk and
src/cuda.mk install (include_HEADERS); the others in src/ are its own.  A
file outside src/ that includes a private header fails, so every program
uses libreducer as a program outside the tree could.

Usage: include_graph.py [TOP_SRCDIR]  (default: $top_srcdir, else .); an empty
or wrong path fails.
"""
import os
import re
import sys

SEARCH = ["src", "benchmarks"]               # AM_CPPFLAGS -I, in order
GENERATED = {"benchmarks/harness/rb_gitrev.h"}  # written by make (harness.mk)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


PROGRAM_USES = {"library", "harness"}
ALLOWED = {
    "library": set(),
    "harness": {"library"},
    "nn": {"library"},
    "train": PROGRAM_USES | {"nn"},
}


def room_of(path):
    """The room of a file path relative to the top."""
    parts = path.split("/")
    if parts[0] == "src":
        return "library"
    if parts[0] == "benchmarks":
        return parts[1] if len(parts) > 2 else "benchmarks"
    raise ValueError(path)


INSTALLED = re.compile(r"^include_HEADERS\s*\+?=\s*((?:.*\\\n)*.*)$", re.M)


def public_headers(top):
    """The headers the build installs (src/*.mk include_HEADERS)."""
    found = set()
    for mk in ("src/local.mk", "src/cuda.mk"):
        if not os.path.isfile(os.path.join(top, mk)):
            continue
        with open(os.path.join(top, mk), encoding="utf-8") as f:
            for m in INSTALLED.finditer(f.read()):
                found.update(w for w in m.group(1).replace("\\\n", " ").split() if w.endswith(".h"))
    return found


def may_use(room, other):
    """Whether a file of room may include or call a file of other."""
    return other == room or other in ALLOWED.get(room, PROGRAM_USES)


def sources(top):
    for root in ("src", "benchmarks"):
        for d, _, files in os.walk(os.path.join(top, root)):
            for f in sorted(files):
                if f.endswith((".c", ".h", ".cu")):
                    yield os.path.relpath(os.path.join(d, f), top)


def resolve(top, path, name):
    for base in [os.path.dirname(path)] + SEARCH:
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(top, cand)):
            return cand
    return None


def module(path):
    return os.path.splitext(path)[0]


def find_cycle(graph):
    """One circle of the module graph as a list of modules, or None."""
    state = {}  # 1 = on the current path, 2 = done
    stack = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{", re.M)
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def code_only(text):
    """The text without comments, string and character literals."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])+'", "''", text)


def call_edges(top, paths):
    """(caller path, callee path, function) for every call between files."""
    code = {p: code_only(open(os.path.join(top, p), encoding="utf-8", errors="replace").read())
            for p in paths if not p.endswith(".h")}
    defined = {}
    for p, text in code.items():
        for m in DEFINITION.finditer(text):
            if m.group(1) not in ("if", "for", "while", "switch", "return", "sizeof"):
                defined.setdefault(m.group(1), set()).add(p)
    for p, text in code.items():
        own = {n for n, where in defined.items() if p in where}
        for name in sorted(set(CALL.findall(text)) - own):
            for q in sorted(defined.get(name, ())):
                if module(q) != module(p):
                    yield p, q, name


def check_calls(top, paths, errors):
    graph, n = {}, 0
    for p, q, name in call_edges(top, paths):
        n += 1
        proom, qroom = room_of(p), room_of(q)
        if not may_use(proom, qroom):
            errors.append(f"{p} calls {name} of {q}: {proom} may not call {qroom}")
        graph.setdefault(module(p), set()).add(module(q))
    cycle = find_cycle(graph)
    if cycle:
        errors.append("call circle: " + " -> ".join(cycle))
    return n


def wrong_top(top):
    """Why top is no source tree, or "".  An empty path would silently
    read the current folder, and a folder without src/ and benchmarks/
    would pass as a clean graph of nothing."""
    if top == "":
        return "an empty path given as the top source folder"
    missing = [d for d in SEARCH if not os.path.isdir(os.path.join(top, d))]
    if missing:
        return f"{top} has no {' or '.join(missing)} folder: wrong path?"
    return ""


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("top_srcdir", ".")
    why = wrong_top(top)
    if why:
        print("FAIL:", why)
        return 1
    graph, errors, nfiles, nedges = {}, [], 0, 0
    public = public_headers(top)
    if not public:
        errors.append("src/local.mk installs no header (include_HEADERS): no public face found")
    for path in sources(top):
        nfiles += 1
        with open(os.path.join(top, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        me, my_room = module(path), room_of(path)
        graph.setdefault(me, set())
        for name in INCLUDE.findall(text):
            target = resolve(top, path, name)
            if target is None:
                if name not in GENERATED:
                    errors.append(f'{path}: #include "{name}" is no file of src/ or benchmarks/')
                continue
            nedges += 1
            room = room_of(target)
            if not may_use(my_room, room):
                errors.append(f"{path} includes {target}: {my_room} may not include {room}")
            if room == "library" and my_room != "library" and target not in public:
                errors.append(f"{path} includes {target}: a private header of the library "
                              f"(public: {', '.join(sorted(public))})")
            if module(target) != me:
                graph[me].add(module(target))
    if nfiles == 0:
        # A wrong top directory must not pass as a clean graph.
        errors.append(f"no .c/.h/.cu file under {top}/src or {top}/benchmarks: wrong path?")
    cycle = find_cycle(graph)
    if cycle:
        errors.append("include circle: " + " -> ".join(cycle))
    ncalls = check_calls(top, list(sources(top)), errors)
    for e in errors:
        print("FAIL:", e)
    print(f"{nfiles} files, {nedges} includes, {ncalls} calls between files, {len(graph)} modules: "
          f"{'no circle, no room beyond its allowed ones' if not errors else f'{len(errors)} problem(s)'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
