"""The CPU port of the S2 authors' code, shared by benchmarks/anchors/s2-authors
(their reducers on a gradient trace) and s2-authors-train (their training
step).  Their files are copied out of a checkout of
github.com/GeKeShi/Sparse_Sketch_Reducer (never committed here) into a
scratch directory and changed by textual patches, each checked to apply:
when their text has moved on, the run stops saying which patch no longer
finds its text instead of running something else.
"""
import os
import shutil
import socket
import sys

SRC = "GNMT/seq2seq/train"

# (file, what to find, what to put there): what their reducers need to run
# on the CPU, and nothing more.
CPU_PATCHES = [
    # the base class's pool of 128M random numbers (~1.5 GB a process),
    # which none of the reducers used here reads
    ("gradient_reducers.py", "torch.from_numpy(self.rng.randn(128 * M)).to(device).type(torch.float32)",
     "torch.zeros(1, device=device)"),
    ("gradient_reducers.py", "torch.cuda.LongTensor([matrix._nnz()], device=self.device)",
     "torch.tensor([matrix._nnz()], dtype=torch.int64, device=self.device)"),
    ("cs_embedding/csvec.py", ".reshape(-1).cuda(self.device)", ".reshape(-1).to(self.device)"),
]

# Their Sketch_Embed_Reducer and Exact_Embed_Reducer assign the decoded
# (gathered) embedding gradient to a local `out` and drop it, so the
# gradient is never updated: these write it into the gradient instead.
KEEP_PATCHES = [
    ("gradient_reducers.py", "out = self.sketch.decompress(p, q).to_dense()",
     "out.data[:] = self.sketch.decompress(p, q).to_dense().view_as(out)"),
    ("gradient_reducers.py",
     "out = (torch.sparse_coo_tensor(indices, values, matrix.size(), device=self.device).coalesce() "
     "/ self.n_workers).to_dense()",
     "out.data[:] = (torch.sparse_coo_tensor(indices, values, matrix.size(), device=self.device)"
     ".coalesce() / self.n_workers).to_dense()"),
]


def skip(prog, why):
    print("%s: SKIP: %s" % (prog, why))
    sys.exit(77)


def die(prog, why):
    print("%s: %s" % (prog, why), file=sys.stderr)
    sys.exit(1)


class NullTimer:
    """Their reducers and optimisers time sections with `with timer(name,
    ...)`; nothing is timed here."""

    def __call__(self, *_a, **_k):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *_a):
        return False


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port(prog, authors, dest, files, patches):
    """Copy files (paths under their GNMT/seq2seq/train: files or
    directories) into dest, a new directory that becomes a package, and
    apply patches: (file, old, new) replaces every occurrence of old,
    (file, old, new, n) requires exactly n.  Exit 77 when authors is not
    their checkout, 1 when a patch finds nothing to change."""
    src = os.path.join(authors, SRC)
    if not os.path.isfile(os.path.join(src, "gradient_reducers.py")):
        skip(prog, "%s holds no %s/gradient_reducers.py (not a Sparse_Sketch_Reducer checkout)"
             % (authors, SRC))
    os.makedirs(dest)
    open(os.path.join(dest, "__init__.py"), "w").close()
    for name in files:
        s = os.path.join(src, name)
        if os.path.isdir(s):
            shutil.copytree(s, os.path.join(dest, name))
        elif os.path.isfile(s):
            shutil.copy(s, dest)
        else:
            die(prog, "the authors' tree has no %s/%s (the port needs updating)" % (SRC, name))
    for patch in patches:
        name, old, new = patch[:3]
        path = os.path.join(dest, name)
        text = open(path).read()
        n = text.count(old)
        if n == 0 or (len(patch) > 3 and n != patch[3]):
            die(prog, "the authors' %s has changed: '%s' found %d times (the port needs updating)"
                % (name, old[:60], n))
        open(path, "w").write(text.replace(old, new))
    return dest
