#!/usr/bin/python3
"""Archives the readers must refuse by name or read without dying, and
rb-report's own faults, on synthetic archives (synth.py):
  - a /micro/results lacking any one column: a column every rb_micro
    archive has is refused, naming it, by validate and rb-archive list;
    any other is read as unknown, and the tables are built;
  - rb-report over a good archive, one lacking a required column and one
    lacking every later column: the report is written and the refused file
    is named;
  - values that must agree and do not (a flipped bit: size 16,384 read as
    81,920, an average outside its samples, #wrong above the count, min
    above max) are refused, naming the row and the rule;
  - a file whose reading crashes HDF5 (bit flips of a real layout, found
    by a seeded search) is refused by name, and rb-report, rb-archive list
    and merge go on or stop with a message, never die with it;
  - schema_version 0 is called damaged, 2 asks for newer tools;
  - 1,100 repetitions of one point (rb_micro --repeat 1100): the interval's
    binomial once overflowed a float;
  - Ctrl-C on rb-report: one line, exit 130, no traceback, no output."""

import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import h5py
    import synth
    from synth import Checks, load_tables, write_micro
    from rbanalysis import screen, validate
except ImportError as e:
    print("SKIP: Debian python3-numpy/h5py/pandas missing (%s)" % e)
    sys.exit(77)

check = Checks()
REPORT = os.path.join(synth.ANALYSIS, "rb-report")
ARCHIVE = os.path.join(synth.ANALYSIS, "rb-archive")
ROWS = [{"reducer": r, "size_bytes": s, "t_avg_us": t, "t_min_us": t, "t_max_us": t,
         "t_p50_us": t, "t_p99_us": t, "bytes_sent_avg": float(s)}
        for r, t0 in (("dense", 50.0), ("agsparse", 20.0)) for s, t in ((4096, t0), (65536, 4 * t0))]


def without(path, names):
    """An archive of ROWS whose /micro/results lacks the columns names."""
    saved = synth.MICRO_COLUMNS
    synth.MICRO_COLUMNS = [c for c in saved if c[0] not in names]
    try:
        return write_micro(path, ROWS)
    finally:
        synth.MICRO_COLUMNS = saved


def refusal(path):
    """validate's reason for refusing path, or None."""
    try:
        with h5py.File(path, "r") as f:
            validate.check_attrs(f.attrs)
            validate.check_micro(f["micro"])
    except validate.Invalid as e:
        return str(e)
    return None


def each_column(tmp):
    later_failed = []
    for name, _ in synth.MICRO_COLUMNS:
        path = without(os.path.join(tmp, "no-%s.h5" % name), {name})
        why = refusal(path)
        if name in validate.MICRO_REQUIRED:
            check(why is not None and name in why, "without %s: refused, naming it (%s)" % (name, why))
            continue
        if why is not None:
            later_failed.append("%s refused: %s" % (name, why))
            continue
        try:
            load_tables([path])
        except Exception as e:  # noqa: BLE001 -- the failure is the finding
            later_failed.append("%s: %s: %s" % (name, type(e).__name__, e))
    check(not later_failed, "every other column may be missing: the tables are built (%s)"
          % "; ".join(later_failed))


def report_goes_on(tmp):
    runs = os.path.join(tmp, "runs")
    os.makedirs(runs)
    write_micro(os.path.join(runs, "good.h5"), ROWS)
    without(os.path.join(runs, "no-layout.h5"), {"layout"})
    later = {n for n, _ in synth.MICRO_COLUMNS if n not in validate.MICRO_REQUIRED}
    without(os.path.join(runs, "first-version.h5"), later)
    out = os.path.join(tmp, "report")
    p = subprocess.run([REPORT, runs, "-o", out], capture_output=True, text=True, timeout=600)
    check(p.returncode == 0 and os.path.exists(os.path.join(out, "report.md")),
          "rb-report over a damaged archive among good ones writes the report (exit %d%s)"
          % (p.returncode, "" if p.returncode == 0 else ": " + p.stderr[-600:]))
    check("no-layout.h5" in p.stderr and "layout" in p.stderr and "Traceback" not in p.stderr,
          "rb-report names the refused file and its missing column")
    lst = subprocess.run([ARCHIVE, "list", runs], capture_output=True, text=True, timeout=120)
    line = [ln for ln in lst.stdout.splitlines() if "no-layout.h5" in ln]
    check(line and "INVALID" in line[0], "rb-archive list calls it INVALID (%s)" % line)


def flipped_bits(tmp):
    """Each case: one value of a good archive changed as a flipped bit
    would change it; refused, naming what does not hold."""
    import numpy as np
    rows = [dict(r, count=r["size_bytes"] // 4, cols=r["size_bytes"] // 4,
                 t_min_us=r["t_avg_us"] / 10, t_max_us=r["t_avg_us"] * 1000) for r in ROWS]
    good = write_micro(os.path.join(tmp, "flip-good.h5"), rows)
    with h5py.File(good, "r+") as f:
        g = f["micro"].create_group("samples")
        for i, r in enumerate(rows):
            t = r["t_avg_us"]
            g.create_dataset(str(i), data=np.array([[t * 0.9, t * 1.1], [t * 1.1, t * 0.9]]))
    check(refusal(good) is None, "the unflipped archive passes (%s)" % refusal(good))
    cases = (("size_bytes", 1, 81920, "size_bytes = 4 x count"),
             ("t_avg_us", 0, 27.22e3, "outside its samples"),
             ("wrong", 0, 2.25e15, "#wrong <= count"),
             ("t_min_us", 2, 1e9, "t_min_us <= t_avg_us <= t_max_us"),
             ("t_p50_us", 3, 1e9, "t_p50_us <= t_p99_us"),
             ("rows", 0, 3, "rows x cols = count"))
    for col, row, value, rule in cases:
        path = os.path.join(tmp, "flip-%s.h5" % col)
        with open(good, "rb") as src, open(path, "wb") as dst:
            dst.write(src.read())
        with h5py.File(path, "r+") as f:
            d = f["micro/results"]
            a = d[...]
            a[col][row] = value
            d[...] = a
        why = refusal(path) or ""
        check(rule in why and ("row %d" % row) in why,
              "%s of row %d set to %g: refused by '%s' (%s)" % (col, row, value, rule, why))


def flip_until_refused(tmp, seed, name):
    """Flip single bits of a fixed archive (seeded) until reading the file
    kills a forked reader or never ends; at most 600 tries.  (path, reason)
    or (None, None)."""
    import random
    good = write_micro(os.path.join(tmp, "crash-src.h5"), ROWS, extra={"run_id": "0" * 32})
    data = open(good, "rb").read()
    rnd = random.Random(seed)
    path = os.path.join(tmp, name)
    for _ in range(600):
        flipped = bytearray(data)
        off = rnd.randrange(512, len(flipped))
        flipped[off] ^= 1 << rnd.randrange(8)
        with open(path, "wb") as f:
            f.write(flipped)
        found = screen.crashing_files([path])
        if found:
            return path, found[path]
    return None, None


def crash_in_hdf5(tmp):
    """Of this archive's seeded flips (Debian 12's HDF5 1.10), seed 2's
    first makes HDF5 crash with SIGSEGV, seed 7's 200th makes it loop (out
    of 300 flips of a 79 KB rb_micro archive, 11 crashed, one looped)."""
    limit = screen.READ_LIMIT_S
    screen.READ_LIMIT_S = 2.0
    try:
        looping, why = flip_until_refused(tmp, 7, "loop.h5")
    finally:
        screen.READ_LIMIT_S = limit
    check(looping is not None and ("never ended" in why or "killed the reader" in why),
          "a flipped file whose reading never ends (or crashes) is refused (%s)" % why)
    crash, why = flip_until_refused(tmp, 2, "crash.h5")
    check(crash is not None, "a bit flip that crashes HDF5 was found in 600 tries (%s)" % why)
    if crash is None:
        return
    runs = os.path.join(tmp, "crash-runs")
    os.makedirs(runs)
    os.rename(crash, os.path.join(runs, "crash.h5"))
    write_micro(os.path.join(runs, "good.h5"), ROWS)
    p = subprocess.run([REPORT, runs, "-o", os.path.join(tmp, "crash-report")],
                       capture_output=True, text=True, timeout=600)
    # HDF5 crashes on this file in some processes and raises in others (it
    # depends on the memory layout): either way the file is refused by name
    # and the rest goes on, never a crash of the tool.
    check(p.returncode == 0 and "refused %s/crash.h5: " % runs in p.stderr
          and "Traceback" not in p.stderr, "rb-report refuses the crashing file by name and "
          "reports the rest (exit %d: %s)" % (p.returncode, p.stderr[-400:]))
    lst = subprocess.run([ARCHIVE, "list", runs], capture_output=True, text=True, timeout=120)
    check(lst.returncode == 1 and "crash.h5" in lst.stdout + lst.stderr and "good.h5" in lst.stdout
          and ("INVALID" in lst.stdout or "cannot read" in lst.stderr)
          and "Traceback" not in lst.stderr, "rb-archive list names it (INVALID or unreadable) "
          "and lists the rest (exit %d: %s)" % (lst.returncode, (lst.stdout + lst.stderr)[-400:]))
    mrg = subprocess.run([ARCHIVE, "merge", "-o", os.path.join(tmp, "m.h5"),
                          os.path.join(runs, "crash.h5"), os.path.join(runs, "good.h5")],
                         capture_output=True, text=True, timeout=120)
    check(mrg.returncode == 2 and "crash.h5: " in mrg.stderr and "Traceback" not in mrg.stderr
          and not os.path.exists(os.path.join(tmp, "m.h5")),
          "rb-archive merge refuses it by name, writing nothing (exit %d: %s)"
          % (mrg.returncode, mrg.stderr[-300:]))


def schema_versions(tmp):
    for version, says in ((0, "damaged"), (2, "use newer tools")):
        path = write_micro(os.path.join(tmp, "schema%d.h5" % version), ROWS)
        with h5py.File(path, "r+") as f:
            f.attrs["schema_version"] = version
        why = refusal(path) or ""
        check(says in why and (version != 0 or "newer" not in why),
              "schema_version %d: '%s' (%s)" % (version, says, why))


def many_repetitions(tmp):
    rows = []
    for i in range(1100):
        t = 50.0 + (i % 7)
        rows.append(dict(ROWS[0], repeat=i, t_avg_us=t, t_min_us=t, t_max_us=t, t_p50_us=t,
                         t_p99_us=t))
    runs = os.path.join(tmp, "repeat")
    os.makedirs(runs)
    write_micro(os.path.join(runs, "r.h5"), rows)
    p = subprocess.run([REPORT, runs, "-o", os.path.join(tmp, "repeat-report")],
                       capture_output=True, text=True, timeout=600)
    check(p.returncode == 0 and "Traceback" not in p.stderr,
          "rb-report over 1,100 repetitions of one point (exit %d %s)"
          % (p.returncode, p.stderr[-300:]))


def interrupted(tmp):
    runs = os.path.join(tmp, "many")
    os.makedirs(runs)
    for i in range(60):
        write_micro(os.path.join(runs, "m%02d.h5" % i), ROWS)
    # While the modules load, and once the report is being built (its
    # work directory exists).
    for when in ("loading", "building"):
        out = os.path.join(tmp, "int-report")
        p = subprocess.Popen([REPORT, runs, "-o", out], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        if when == "loading":
            time.sleep(0.2)
        else:
            for _ in range(1200):
                if [n for n in os.listdir(tmp) if n.startswith(".int-report.tmp.")] or p.poll() is not None:
                    break
                time.sleep(0.05)
        delay = when
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        check(p.returncode == 130 and "Traceback" not in err and "interrupted" in err,
              "Ctrl-C on rb-report while %s: exit 130 and one line (exit %d: %s)"
              % (delay, p.returncode, err[-300:]))
        left = [n for n in os.listdir(tmp) if ".int-report.tmp." in n]
        check(not os.path.exists(out) and not left,
              "Ctrl-C on rb-report while %s leaves no report and no temporary (report: %s, "
              "temporaries: %s)" % (delay, os.path.exists(out), left))


with tempfile.TemporaryDirectory() as tmp:
    for test in (each_column, report_goes_on, flipped_bits, crash_in_hdf5, schema_versions, many_repetitions, interrupted):
        test(tmp)
sys.exit(check.exit())
