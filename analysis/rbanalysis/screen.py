"""Reading archives without dying on them: every file is read once, whole,
in a forked child (HDF5 aborts or loops on some damaged files), bounded in
time by its size; what it finds (a crash, a stall, the runs' digests)
comes back to the parent, which goes on with the files that can be read.
rb-report's and rb-archive's first step; the rules a run must meet are
validate.py's."""

import os

from .validate import COPY_ATTRS, content_digest, file_problem, read_attribute


def _read_everything(path):
    """Open path with HDF5 and read every attribute and dataset in it: what
    any reader will touch.  Exceptions are the caller's."""
    import h5py

    def visit(_name, obj):
        for key in obj.attrs:
            read_attribute(obj, key)
        if isinstance(obj, h5py.Dataset):
            obj[()]

    with h5py.File(path, "r") as f:
        visit("/", f)
        f.visititems(visit)


def run_groups(f):
    """[(name, group)] of the runs in an open file: [("", f)] for a
    single-run file, /runs/* for a merged archive (a group named runs
    holding groups, no run data at the root)."""
    import h5py
    if ("runs" in f and isinstance(f["runs"], h5py.Group)
            and "micro" not in f and "train" not in f):
        return [(name, f["runs"][name]) for name in sorted(f["runs"])
                if isinstance(f["runs"][name], h5py.Group)]
    return [("", f)]


def _first_read(path):
    """The first read of a file, in the child: every attribute and dataset
    in it, as _read_everything.  Taking its runs' content_digest reads all
    of them but the root's COPY_ATTRS, so that is how a single-run file is
    read, and the reader, given the digests, need not read its runs whole
    a second time.  Returns {run name: digest, or [exception type, message]
    where it could not be taken}; {} when the file cannot be gone through
    (then as much of it is read as _read_everything can)."""
    try:
        return _digests(path)
    except Exception:  # noqa: BLE001 -- an error is for the reader to name, not a crash
        _read_quietly(path)
        return {}


def _digests(path):
    import h5py
    digests = {}
    with h5py.File(path, "r") as f:
        groups = run_groups(f)
        whole = [name for name, _ in groups] == [""]
        if not whole:   # a merged archive: what lies outside its runs too
            _read_quietly(path)
        for name, grp in groups:
            try:
                digests[name] = content_digest(grp)
            except Exception as e:  # noqa: BLE001 -- the reader refuses the run with it
                digests[name] = [type(e).__name__, str(e)]
        if whole and isinstance(digests[""], list):   # it stopped midway
            _read_quietly(path)
        elif whole:
            for key in COPY_ATTRS:
                if key in f.attrs:
                    read_attribute(f, key)
    return digests


def _read_quietly(path):
    try:
        _read_everything(path)
    except Exception:  # noqa: BLE001 -- an error is for the reader to name, not a crash
        pass


def _screen_worker(paths, out_fd):
    """The child: for each path in order, one line once it is read: the
    JSON of its runs' digests ({} when it could not be read)."""
    import json
    for path in paths:
        line = (json.dumps(_first_read(path)) + "\n").encode()
        while line:
            line = line[os.write(out_fd, line):]
    os._exit(0)


# A first read that makes no progress for this long (plus a second per
# 50 MB of file) is taken for HDF5 looping on a damaged file.
READ_LIMIT_S = 10.0
READ_RATE_BPS = 50e6


def _read_limit(path):
    try:
        return READ_LIMIT_S + os.path.getsize(path) / READ_RATE_BPS
    except OSError:
        return READ_LIMIT_S


class _Lines:
    """The child's progress: its lines, each waited for at most a time."""

    def __init__(self, fd):
        self.fd, self.buf, self.ended = fd, b"", False

    def next(self, seconds):
        """The next line (bytes, without its newline) within seconds; None
        at EOF (the child died) or when the time is out (it stalled)."""
        import select
        import time
        deadline = time.monotonic() + seconds
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:   # the child has ended, or is ending
                self.ended = True
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line


def crashing_files(paths):
    """{path: reason} of the files whose first read kills the process that
    reads it (a damaged file can crash the HDF5 library: SIGSEGV, an
    abort) or never ends (HDF5 looping on it): first_reads() of them all.
    Where fork is not available, {}."""
    return {path: why for path, why, _ in first_reads(paths) if why}


def first_reads(paths):
    """(path, reason, digests) for each of paths, in order, as soon as a
    forked child has read that file in full.  reason: None when the read
    went through, else why the file must not be read in this process (its
    read killed the child, or never ended).  digests: the content_digest
    of each run in the file, {run name ("" for a single-run file): hex
    digest, or [exception type, message] where it could not be taken}; {}
    when the file could not be opened.  Files that file_problem() names,
    and all of them where fork is not available, come unread: (path, None,
    None).

    One child reads the files one after the other, ahead of the caller:
    while the caller works on a file, the child reads the next ones (on a
    machine with a core to spare, the first read costs next to no time).
    When it dies or stalls, the file it was reading is named and a new
    child takes the rest."""
    readable = [file_problem(p) is None and hasattr(os, "fork") for p in paths]
    screened = _screen([p for p, ok in zip(paths, readable) if ok])
    try:
        for path, ok in zip(paths, readable):
            yield next(screened) if ok else (path, None, None)
    finally:   # closed early: so is the child
        screened.close()


def _screen(paths):
    """first_reads() of files that can be read, in order."""
    import json
    rest = list(paths)
    while rest:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:   # the child: no Python-level cleanup on the way out
            os.close(r)
            try:
                _screen_worker(rest, w)
            finally:
                os._exit(1)
        os.close(w)
        lines, done, status = _Lines(r), 0, None
        try:
            while done < len(rest):
                line = lines.next(_read_limit(rest[done]))
                if line is None:
                    break
                yield rest[done], None, json.loads(line)
                done += 1
            # late: it stopped writing without ending (an ended child may
            # not be reaped yet: it is waited for, not taken for stalled)
            stalled, status = _end_child(pid, done < len(rest) and not lines.ended)
        finally:
            if status is None:   # the caller stopped early (an error, ^C): no child left behind
                _end_child(pid, True)
            os.close(r)
        if done >= len(rest):
            return
        yield rest[done], _crash_reason(rest[done], stalled, status), None
        rest = rest[done + 1:]


def _end_child(pid, late):
    """(stalled, wait status) of the child pid, reaped: stalled when it is
    late (it has not read all its files) and still running: killed then."""
    import signal
    reaped, status = os.waitpid(pid, os.WNOHANG)
    stalled = late and reaped == 0
    if reaped == 0:   # stalled, or ending right now
        if stalled:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    return stalled, status


def _crash_reason(path, stalled, status):
    import signal
    if stalled:
        what = ("reading it never ended (it did not end in %.0f s: HDF5 looping on a "
                "damaged file?)" % _read_limit(path))
    elif os.WIFSIGNALED(status):
        what = ("reading it killed the reader (signal %s inside the HDF5 library): damaged"
                % signal.Signals(os.WTERMSIG(status)).name)
    else:
        what = "reading it killed the reader (exit status %d): damaged" % os.WEXITSTATUS(status)
    return what + "; refused without reading it here"
