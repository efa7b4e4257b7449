#!/usr/bin/python3
"""The include graph of src/ and benchmarks/ has no circle and no upward edge.

Read from the #include "..." lines of every .c, .h and .cu file.  A module
is a file name without its extension (foo.c, foo.h and foo.cu are one
module), so foo.c including bar.h while bar.c includes foo.h is a circle
even though no header includes itself.

Floors (docs/architecture.md): the library src/ (0) < the harness
benchmarks/harness/ (1) < the programs, one folder each under benchmarks/
(2).  A file may include its own floor and the floors below; a program
never includes another program's files.

Quoted includes resolve as the compiler resolves them: the including
file's folder first, then the -I folders of Makefile.am (src/,
benchmarks/).  An include that resolves to no file of the tree fails the
test, unless it is a header the build generates.

Usage: include_graph.py [TOP_SRCDIR]  (default: $top_srcdir, else .)
"""
import os
import re
import sys

SEARCH = ["src", "benchmarks"]               # AM_CPPFLAGS -I, in order
GENERATED = {"benchmarks/harness/rb_gitrev.h"}  # written by make (harness.mk)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def floor_of(path):
    """(floor, room) of a file path relative to the top."""
    parts = path.split("/")
    if parts[0] == "src":
        return 0, "library"
    if parts[0] == "benchmarks" and len(parts) > 2 and parts[1] == "harness":
        return 1, "harness"
    if parts[0] == "benchmarks":
        return 2, parts[1] if len(parts) > 2 else "benchmarks"
    raise ValueError(path)


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


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("top_srcdir", ".")
    graph, errors, nfiles, nedges = {}, [], 0, 0
    for path in sources(top):
        nfiles += 1
        with open(os.path.join(top, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        me, (my_floor, my_room) = module(path), floor_of(path)
        graph.setdefault(me, set())
        for name in INCLUDE.findall(text):
            target = resolve(top, path, name)
            if target is None:
                if name not in GENERATED:
                    errors.append(f'{path}: #include "{name}" is no file of src/ or benchmarks/')
                continue
            nedges += 1
            floor, room = floor_of(target)
            if floor > my_floor:
                errors.append(f"{path} includes {target}: upward ({my_room} below {room})")
            elif floor == my_floor == 2 and room != my_room:
                errors.append(f"{path} includes {target}: one program's files in another's")
            if module(target) != me:
                graph[me].add(module(target))
    if nfiles == 0:
        # A wrong top directory must not pass as a clean graph.
        errors.append(f"no .c/.h/.cu file under {top}/src or {top}/benchmarks: wrong path?")
    cycle = find_cycle(graph)
    if cycle:
        errors.append("include circle: " + " -> ".join(cycle))
    for e in errors:
        print("FAIL:", e)
    print(f"{nfiles} files, {nedges} includes, {len(graph)} modules: "
          f"{'no circle, nothing upward' if not errors else f'{len(errors)} problem(s)'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
