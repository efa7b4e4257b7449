"""rb-report's output: a report is built in a fresh folder beside its
destination and put in place whole (one rename, or the earlier report's
files replaced one by one, report.md last), so that a failure (a full
disk, a bug, ^C) leaves the destination as it was."""

import os
import shutil
import tempfile


FIGURE_PREFIXES = ("verdict", "latency_", "speedup_", "wire_bytes_", "scaling_", "s2_error_",
                   "sim_vs_wire_",
                   "gossip_consensus_", "train_", "phases_", "efficiency", "workload_",
                   "crossover_")


def output_problem(outdir):
    """Why outdir cannot take a report (None if it can), checked before
    anything is read or created: an existing directory must be writable,
    a new one must have a writable parent."""
    if os.path.lexists(outdir) and not os.path.isdir(outdir):
        return "exists and is not a directory"
    probe = outdir if os.path.isdir(outdir) else os.path.dirname(os.path.abspath(outdir))
    if not os.path.isdir(probe):
        return "its parent directory %s does not exist" % probe
    try:
        tempfile.TemporaryFile(dir=probe).close()
    except OSError as e:
        return "%s is not writable (%s)" % (probe, e.strerror or e)
    return None


UNCHANGED = "the output directory is as it was"


def start_output(outdir):
    """The empty directory the report is written into, on outdir's file
    system, so that a failure midway (a full disk) leaves no partial report:
    beside outdir when outdir does not exist yet (publish_output renames it
    onto outdir), inside outdir when it does (publish_output moves its files
    in, so that files of others there stay)."""
    where = outdir if os.path.isdir(outdir) else os.path.dirname(os.path.abspath(outdir))
    name = os.path.basename(os.path.abspath(outdir))
    work = tempfile.mkdtemp(prefix=".%s.tmp." % name, dir=where)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(work, 0o777 & ~umask)   # mkdtemp's 0700 would be the report's mode
        os.mkdir(os.path.join(work, "tables"))
    except BaseException:   # ^C or a full disk right after mkdtemp: nothing left behind
        shutil.rmtree(work, ignore_errors=True)
        raise
    return work


def publish_output(work, outdir):
    """Put the whole report in work at outdir: one rename when outdir does
    not exist; else the earlier report in outdir is removed and the new
    one's files renamed in, report.md last.  Renames and removals only:
    nothing here needs disk space."""
    if not os.path.isdir(outdir):
        os.rename(work, outdir)
        return
    remove_earlier_report(outdir)
    tables = os.path.join(outdir, "tables")
    os.makedirs(tables, exist_ok=True)
    for name in os.listdir(os.path.join(work, "tables")):
        os.replace(os.path.join(work, "tables", name), os.path.join(tables, name))
    os.rmdir(os.path.join(work, "tables"))
    for name in sorted(os.listdir(work), key=lambda n: n == "report.md"):
        os.replace(os.path.join(work, name), os.path.join(outdir, name))
    os.rmdir(work)


def remove_earlier_report(outdir):
    """Remove the report outdir holds, if any (report.md and .html first, so
    that a failure never leaves one pointing at removed files), its figures
    and tables (only files rb-report names) so that none goes stale."""
    if not os.path.exists(os.path.join(outdir, "report.md")):
        return
    os.remove(os.path.join(outdir, "report.md"))
    if os.path.exists(os.path.join(outdir, "report.html")):
        os.remove(os.path.join(outdir, "report.html"))
    for name in os.listdir(outdir):
        if name.endswith(".png") and name.startswith(FIGURE_PREFIXES):
            os.remove(os.path.join(outdir, name))
    tables = os.path.join(outdir, "tables")
    if os.path.isdir(tables):
        for name in os.listdir(tables):
            if name.endswith(".csv"):
                os.remove(os.path.join(tables, name))
