"""Files that appear only whole: the Python side of the C writers'
protocol (benchmarks/harness/tmpfiles.c).  The bytes go to
PATH.tmp.HOST.PID (in PATH's folder, so the rename stays on one file
system), are synced, and the temporary is renamed to PATH; on any failure
(a full disk, Ctrl-C) the temporary is removed and nothing is at PATH.
rb-archive merge and the gradient-trace writer use it (output_problem
first); rb-archive clean reads the same names."""
import os
import socket


class AppearedMeanwhile(FileExistsError):
    """PATH was made by someone else while writing (without force)."""


def this_host():
    return socket.gethostname().replace("/", "_") or "unknown-host"


def tmp_name(path):
    """PATH.tmp.HOST.PID, the base shortened as the C writers do
    (tmpfiles.c) when the whole would not fit NAME_MAX (255)."""
    d, base = os.path.split(path)
    host = this_host()
    room = 255 - len(".tmp.") - len(host) - 1 - 10
    if len(base.encode()) > room and room >= 24:
        h = 2166136261
        for c in base.encode():
            h = ((h ^ c) * 16777619) & 0xffffffff
        base = "%s~%08x.h5" % (base.encode()[:room - 12].decode("utf-8", "ignore"), h)
    return os.path.join(d, "%s.tmp.%s.%d" % (base, host, os.getpid()))


def write_bytes(path, data, force=False):
    """Write data (bytes-like) to path through a synced temporary.  With
    force an existing path is replaced; without, a path that appeared
    while writing is never overwritten (link() fails): AppearedMeanwhile.
    OSError as the system gives it otherwise."""
    tmp = tmp_name(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as w:
            w.write(data)
            w.flush()
            os.fsync(w.fileno())
        if force:
            os.replace(tmp, path)
            return
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise AppearedMeanwhile(path) from None
        os.unlink(tmp)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def output_problem(out, force):
    """Why the file out may not be written (None if it may), said before any
    work: an existing file needs force, a device, FIFO, link or directory is
    never replaced, the folder must exist and take the temporary."""
    if not os.path.lexists(out):
        parent = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(parent):
            return "cannot write %s: directory %s does not exist" % (out, parent)
        if not os.access(parent, os.W_OK | os.X_OK):
            return "cannot write %s: directory %s is not writable" % (out, parent)
    elif os.path.islink(out):
        return "%s is a symbolic link; give the path of the file itself" % out
    elif not os.path.isfile(out):
        return "%s exists and is not a regular file" % out
    elif not force:
        return "refusing to overwrite existing %s (use --force)" % out
    # The temporary the write will use, made and removed: access() says yes
    # to root on /proc or on a read-only file system, where rb-archive merge
    # then failed after reading every input (exit 1).
    probe = tmp_name(out)
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        os.unlink(probe)
    except OSError as e:
        return "cannot write %s: %s" % (out, e.strerror or e)
    return None
