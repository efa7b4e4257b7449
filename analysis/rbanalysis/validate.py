"""What an archive may say: the one copy of the rules every reader applies.

rb-report (through load.py) and rb-archive (list, merge) both ask this
module whether a run may be used, so the two tools can never disagree on
it.  A run is refused, with the reason, when:

  - it has no schema_version, or a major version these tools do not know;
  - its `complete` attribute is not the integer 1 (the run did not finish,
    failed, or the attribute is not a number);
  - its tool is unknown, or it holds no data for its tool (rb_micro:
    /micro/results, a compound table of at least one row with the columns
    below, numbers where numbers belong; rb_train: a /train group with its
    curves);
  - it stopped early: timed_out = 1 (--timeout: a partial sweep or curve, not
    comparable with finished runs) or diverged = 1 (a loss became NaN);
  - it was interrupted: a fault (no progress inside a call, a signal) kept
    the rows it had finished as FILE.h5.interrupted, its reason in the
    file's user block (interruption() reads it), complete = 0; or rank 0
    was killed and its temporary FILE.h5.tmp.HOST.PID, flushed after every
    row, was kept so (no reason recorded);
  - a value no run can have: ranks < 1, a time that is negative, NaN or
    infinite, a recall outside 0..1, a density outside 0..1, a negative
    count (#wrong, bytes, iterations), a non-finite training loss; in a
    training curve an accuracy outside 0..100, a perplexity below 1, a
    negative loss or time, iterations that go back; a curve table with no
    row; text where the report reads a number;
  - values of a row that must agree do not (check_micro_agreement);
  - reading it kills the process (a damaged file that crashes HDF5):
    screen.py reads every file first in a forked child.
Only h5py and numpy are needed (rb-archive uses this, screen.py and
schema.py)."""

import hashlib
import os
import re
import stat

import numpy as np

from . import schema

# The archive contract (docs/archive-schema.json, schema.py): what is
# required and which values are accepted come from there.
_SCHEMA = schema.load()
SUPPORTED_SCHEMA_MAJOR = tuple(_SCHEMA["supported_major"])
# A fault's note (benchmarks/harness/bench_keep.h): the first bytes of the
# file, in its HDF5 user block, NUL-padded; and the name it keeps a file under.
NOTE_BYTES = _SCHEMA["interrupted_note"]["bytes"]
NOTE_PREFIX = _SCHEMA["interrupted_note"]["prefix"].encode()
KEPT_SUFFIX = _SCHEMA["interrupted_note"]["kept_suffix"]
KNOWN_TOOLS = tuple(_SCHEMA["tools"])

_MICRO_COLUMNS = schema.columns("/micro/results")
# Columns /micro/results must have: every rb_micro archive has carried
# them since the table's first version, and the report cannot place or
# compare a row without them (a table lacking one was damaged or written
# by something else; the report refused nothing and died on it).
MICRO_REQUIRED = schema.required(_MICRO_COLUMNS)
# Times: finite and >= 0 in every row.
MICRO_TIMES = schema.checked(_MICRO_COLUMNS, "time")
# Times that may be unknown (NaN: phases not timed, --no-phase-times; no
# model; no memory floor on a device), else finite and >= 0.
MICRO_MODEL_TIMES = schema.checked(_MICRO_COLUMNS, "time or NaN")
# Counts and byte figures: finite and >= 0.
MICRO_COUNTS = schema.checked(_MICRO_COLUMNS, "count")
# Fractions: 0..1 (recall may be NaN: not measured, an unvalidated row).
MICRO_FRACTIONS = (schema.checked(_MICRO_COLUMNS, "fraction")
                   + schema.checked(_MICRO_COLUMNS, "fraction or NaN"))


class Invalid(Exception):
    """The run must not be used; str() is the reason."""


def file_problem(path):
    """Why path cannot be read as an archive without opening it (None if
    it can): opening a FIFO named *.h5 waits for a writer forever, and a
    device or socket is no archive."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        return "cannot read it: %s" % (e.strerror or e)
    if stat.S_ISREG(mode):
        return None
    kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a device")
    return "not a regular file (%s): not read" % kind


def read_attribute(obj, name):
    """obj.attrs[name] (obj: an h5py object) as h5py 3 reads it -- the same
    HDF5 calls, the same value -- in half the time: h5py's layers of Python
    per attribute are most of the cost of reading a run, and a report over
    thousands of runs reads hundreds of thousands of attributes.  (A copy
    of h5py's AttributeManager.__getitem__; tests/analysis/unit/
    test_validate.py checks the two agree on every kind of attribute.)"""
    from h5py import Empty, h5a, h5s, h5t
    attr = h5a.open(obj.id, name.encode("utf-8") if isinstance(name, str) else name)
    space = attr.get_space()
    if space.get_simple_extent_type() == h5s.NULL:
        return Empty(attr.dtype)
    dtype, shape = attr.dtype, space.shape
    htype = h5t.py_create(dtype)
    if dtype.subdtype is not None:   # an array type: numpy wants it in the shape
        dtype, sub = dtype.subdtype
        shape = shape + sub
    arr = np.zeros(shape, dtype=dtype)
    attr.read(arr, mtype=htype)
    info = h5t.check_string_dtype(dtype)
    if info and info.length is None:   # variable-length strings: str, as h5py gives them
        arr = np.array([b.decode("utf-8", "surrogateescape") for b in arr.flat],
                       dtype=dtype).reshape(arr.shape)
    return arr[()] if arr.ndim == 0 else arr


def interruption(path):
    """The reason a fault wrote into the file at path (its user block), or
    None: no note (a finished run, or a rank 0 killed before it could
    write one)."""
    try:
        with open(path, "rb") as f:
            head = f.read(NOTE_BYTES)
    except OSError:
        return None
    if not head.startswith(NOTE_PREFIX):
        return None
    return head[len(NOTE_PREFIX):].split(b"\n", 1)[0].rstrip(b"\0").decode("utf-8", "replace")


def is_kept_partial(path):
    """Whether path names what a fault kept (FILE.h5.interrupted) or what
    the job scripts kept of a run stopped early (FILE.h5.failed)."""
    return path.endswith((KEPT_SUFFIX, ".h5.failed"))


def check_interrupted(run):
    """A run a fault interrupted: its file carries a note, or the name a
    fault keeps a file under.  Raises Invalid with the reason."""
    try:
        path = run.file.filename if run.name == "/" else None
    except (AttributeError, ValueError):
        path = None
    if not path:
        return
    note = interruption(path)
    if note is None and not path.endswith(KEPT_SUFFIX):
        return
    rows = ""
    micro = run.get("micro/results") if "micro" in run else None
    if micro is not None and getattr(micro, "shape", ()) != ():
        rows = "; %d row(s) finished before it are kept" % len(micro)
    raise Invalid("interrupted: %s%s: a partial run, not used"
                  % (note or "no reason recorded (its rank 0 was killed without a word: SIGKILL, a "
                     "node lost; the job scripts kept its temporary, flushed after every row)", rows))


def text(v):
    """An attribute value as str (h5py gives str, bytes or numpy scalars)."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray):
        return text(v.reshape(-1)[0]) if v.size == 1 else str(v.tolist())
    if isinstance(v, np.generic):
        return str(v.item())
    return "" if v is None else str(v)


def schema_major(value):
    """The major version of a schema_version attribute ("1", 1, "1.2" -> 1)."""
    if value is None:
        return None
    m = re.match(r"\s*(\d+)", text(value))
    return int(m.group(1)) if m else None


def flag(attrs, name):
    """An integer flag attribute (complete, timed_out, diverged): its value,
    None when absent; Invalid when it is there but not an integer."""
    if name not in attrs:
        return None
    v = attrs[name]
    if isinstance(v, np.ndarray) and v.size == 1:
        v = v.reshape(-1)[0]
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v).is_integer():
        return int(v)
    if isinstance(v, (str, bytes)) and re.fullmatch(r"\s*-?\d+\s*", text(v)):
        return int(text(v))
    raise Invalid("its %s attribute is %r, not an integer: not written by reducerbench"
                  % (name, text(v)))


# Root attributes that hold one value (an array where the report reads
# one ended rb-report in a traceback).
SCALAR_ROOT_ATTRS = schema.root_scalars()


def check_scalar_attrs(attrs):
    for name in SCALAR_ROOT_ATTRS:
        if name in attrs:
            v = attrs[name]
            if isinstance(v, np.ndarray) and v.size != 1:
                raise Invalid("root attribute %s holds %d values, not one: not written by "
                              "reducerbench" % (name, v.size))


def check_attrs(attrs):
    """The run's root attributes (a mapping: h5py attrs or a dict).  Raises
    Invalid with the reason; returns the tool's name."""
    check_scalar_attrs(attrs)
    if "schema_version" not in attrs:
        raise Invalid("no schema_version attribute: not a reducerbench archive, "
                      "or one too old to read")
    major = schema_major(attrs["schema_version"])
    if major is None:
        raise Invalid("schema_version %r is not a version number" % text(attrs["schema_version"]))
    if major not in SUPPORTED_SCHEMA_MAJOR:
        known = ", ".join(str(v) for v in SUPPORTED_SCHEMA_MAJOR)
        # Newer tools help only with a version above the ones known here;
        # 0 or a negative one was never written by any release.
        advice = ("use newer tools" if major > max(SUPPORTED_SCHEMA_MAJOR)
                  else "no reducerbench release wrote it: a damaged or foreign file")
        raise Invalid("unknown schema version %s (these tools read major %s); %s"
                      % (text(attrs["schema_version"]), known, advice))
    complete = flag(attrs, "complete")
    if complete != 1:
        raise Invalid("marked incomplete (complete=%s): the run did not finish or failed; "
                      "its numbers are not used" % ("absent" if complete is None else complete))
    tool = text(attrs.get("tool"))
    if tool not in KNOWN_TOOLS:
        raise Invalid("unknown tool %r (expected %s)" % (tool, ", ".join(KNOWN_TOOLS)))
    check_stopped(attrs)
    if "ranks" in attrs:
        ranks = _number(attrs["ranks"])
        if ranks is None or not ranks >= 1:
            raise Invalid("ranks = %s: a run has at least 1 rank" % text(attrs["ranks"]))
    return tool


def check_stopped(attrs, where=""):
    """A run that ended early keeps what it measured but is not a result."""
    if flag(attrs, "diverged") == 1:
        raise Invalid("diverged%s: a loss became NaN or infinite and the run stopped; "
                      "no accuracy or perplexity is reported" % where)
    if flag(attrs, "timed_out") == 1:
        raise Invalid("stopped by its time limit (--timeout, timed_out=1%s): a partial %s, "
                      "not comparable with finished runs"
                      % (where, "curve" if where else "run"))


def _number(v):
    try:
        return float(text(v))
    except ValueError:
        return None


# ---------------------------------------------------------------- /micro

def check_micro(g, keep=None):
    """/micro of a run (an h5py group): the results table and its values.
    Returns the table (a numpy structured array).  keep: check_run's."""
    import h5py
    if "results" not in g:
        raise Invalid("/micro has no results table")
    d = g["results"]
    if not isinstance(d, h5py.Dataset):
        raise Invalid("/micro/results is not a table (a group)")
    if d.dtype.names is None:
        raise Invalid("/micro/results is not a compound table")
    missing = [c for c in MICRO_REQUIRED if c not in d.dtype.names]
    if missing:
        raise Invalid("/micro/results lacks the column(s) %s that every rb_micro archive has: "
                      "damaged, or not written by reducerbench" % ", ".join(missing))
    check_micro_types(d.dtype)
    if d.shape == () or len(d) == 0:
        # rb_micro keeps no archive without a row (a failure or a timeout
        # before the first leaves none): an empty table was not written by it
        raise Invalid("/micro/results holds no rows: no size was measured")
    arr = read_table(d)
    check_micro_values(arr)
    check_micro_samples(g, arr, keep)
    if keep is not None:
        keep["micro/results"] = arr
    return arr


def check_micro_samples(g, arr=None, keep=None):
    """/micro/samples/<row>: each call's time on each rank (us), which the
    report's per-iteration quartiles come from: numbers, finite, >= 0, and
    the row's t_avg_us (their mean) among them.  keep: check_run's."""
    import h5py
    if "samples" not in g or not isinstance(g["samples"], h5py.Group):
        return
    samples = g["samples"]
    for key in sorted(samples):
        ds = samples[key]
        if not isinstance(ds, h5py.Dataset):
            continue
        where = "/micro/samples/%s" % key
        if not np.issubdtype(ds.dtype, np.number) or ds.dtype.names:
            raise Invalid("%s is of type %s, not per-call times: not written by reducerbench"
                          % (where, ds.dtype))
        v = np.asarray(ds[...], dtype=float)
        bad = ~(np.isfinite(v) & (v >= 0))
        if bad.any():
            raise Invalid("%s: a per-call time = %s is a value no run can have (times are finite "
                          "and >= 0)" % (where, text(v[bad].reshape(-1)[0])))
        row = sample_row(ds, key)
        if keep is not None:
            keep["micro/samples/" + key] = (ds, row, v)
        if arr is not None and v.size and row is not None and 0 <= row < len(arr) \
                and "t_avg_us" in arr.dtype.names:
            avg = float(arr["t_avg_us"][row])
            if not v.min() * (1 - ROUNDING) <= avg <= v.max() * (1 + ROUNDING):
                raise Invalid("/micro/results row %d: t_avg_us = %s lies outside its samples "
                              "(%s: %s .. %s): damaged (a flipped bit?)"
                              % (row, text(avg), where, text(v.min()), text(v.max())))


def read_table(d):
    """d[...] of an h5py dataset: the same array, in a tenth of the time for
    a compound table whose text columns are stored NUL-terminated (rb_micro's
    /micro/results).  h5py has HDF5 convert those to NUL-padded text, at a
    millisecond a table; here HDF5 copies the stored bytes, and the text is
    cut at its first NUL after, which is all that conversion does (the
    other columns are stored as h5py asks for them: copied as they are)."""
    from h5py import h5s
    if not d.shape or len(d.shape) != 1 or d.dtype.names is None:
        return d[...]
    ftype = d.id.get_type()
    key = (ftype.encode(), d.dtype)
    if key not in _TEXT_TO_CUT:
        _TEXT_TO_CUT[key] = _text_to_cut(ftype, d.dtype)
    cut = _TEXT_TO_CUT[key]
    if cut is None:
        return d[...]
    arr = np.empty(d.shape, dtype=d.dtype)
    d.id.read(h5s.ALL, h5s.ALL, arr, mtype=ftype)
    for name in cut:
        arr[name] = [v.split(b"\0", 1)[0] for v in arr[name].tolist()]
    return arr


_TEXT_TO_CUT = {}   # (stored type, numpy type) -> _text_to_cut's answer


def _text_to_cut(ftype, dtype):
    """The columns of a compound table stored as ftype that HDF5 converts
    when h5py reads it as dtype, if it converts no other: fixed-length text
    stored NUL-terminated, of the size and character set asked for (the
    others are stored exactly as asked for: copied as they are).  None when
    the table must be read the usual way."""
    from h5py import h5t
    if ftype.get_class() != h5t.COMPOUND or ftype.get_size() != dtype.itemsize \
            or ftype.get_nmembers() != len(dtype.names):
        return None
    cut = []
    for i, name in enumerate(dtype.names):
        stored, want = ftype.get_member_type(i), h5t.py_create(dtype[name])
        if ftype.get_member_name(i) != name.encode() or \
                ftype.get_member_offset(i) != dtype.fields[name][1]:
            return None
        if stored == want:
            continue
        if (stored.get_class() == h5t.STRING and want.get_class() == h5t.STRING
                and not stored.is_variable_str() and not want.is_variable_str()
                and dtype[name].kind == "S" and stored.get_size() == want.get_size()
                and stored.get_cset() == want.get_cset()
                and stored.get_strpad() == h5t.STR_NULLTERM
                and want.get_strpad() == h5t.STR_NULLPAD):
            cut.append(name)
            continue
        return None
    return tuple(cut)


def sample_row(ds, key):
    """The row a samples dataset belongs to: its row attribute, else the
    number its name ends with (any padding); None when neither says."""
    try:
        idx = read_attribute(ds, "row")
    except KeyError:   # none (h5py's attrs.get)
        idx = None
    if idx is None:
        m = re.search(r"(\d+)$", key)
        return int(m.group(1)) if m else None
    try:
        return int(text(idx))
    except ValueError:
        return None


def micro_numeric_columns(names):
    """The columns of /micro/results that hold numbers (of those present)."""
    numeric = (("size_bytes", "ranks", "iters", "nnz_union", "checked") + MICRO_TIMES
               + MICRO_MODEL_TIMES + MICRO_COUNTS + MICRO_FRACTIONS)
    return [c for c in numeric if c in names]


def _check_number_columns(dtype, columns, where):
    """A column meant for numbers (of columns, those dtype has) that holds
    text, an array or anything else is named, rather than failing later in
    a comparison."""
    for col in columns:
        if col not in dtype.names:
            continue
        t = dtype[col]
        if not (np.issubdtype(t, np.number) or np.issubdtype(t, np.bool_)) or t.shape:
            raise Invalid("%s column %s is of type %s, not a number: not written by "
                          "reducerbench" % (where, col, t))


def check_micro_types(dtype):
    """/micro/results' numeric columns hold numbers."""
    _check_number_columns(dtype, micro_numeric_columns(dtype.names), "/micro/results")


def _bad_rows(arr, col, ok):
    """Raise Invalid naming the first row where ok (a boolean array) fails."""
    if ok.all():
        return
    i = int(np.flatnonzero(~ok)[0])
    size = arr["size_bytes"][i] if "size_bytes" in arr.dtype.names else "?"
    red = text(arr["reducer"][i]).rstrip("\0") if "reducer" in arr.dtype.names else "?"
    raise Invalid("/micro/results row %d (%s, %s bytes): %s = %s is a value no run can have%s"
                  % (i, red, size, col, text(arr[col][i]), _why(col)))


def _why(col):
    if col in MICRO_TIMES:
        return " (times are finite and >= 0)"
    if col in MICRO_MODEL_TIMES:
        return " (phase and modelled times are >= 0, or NaN when unknown)"
    if col in MICRO_FRACTIONS:
        return " (a fraction: 0..1)"
    if col == "ranks":
        return " (a run has at least 1 rank)"
    if col == "checked":
        return " (0 or 1)"
    return " (counts are finite and >= 0)"


def check_micro_values(arr):
    names = arr.dtype.names
    if "ranks" in names:
        _bad_rows(arr, "ranks", arr["ranks"] >= 1)
    for col in MICRO_TIMES:
        if col in names:
            v = arr[col].astype(float)
            _bad_rows(arr, col, np.isfinite(v) & (v >= 0))
    for col in MICRO_MODEL_TIMES:
        if col in names:
            v = arr[col].astype(float)
            _bad_rows(arr, col, np.isnan(v) | (np.isfinite(v) & (v >= 0)))
    for col in MICRO_COUNTS:
        if col in names:
            v = arr[col].astype(float)
            _bad_rows(arr, col, np.isfinite(v) & (v >= 0))
    if "nnz_union" in names:   # -1: not known (the row was not validated)
        v = arr["nnz_union"].astype(float)
        _bad_rows(arr, "nnz_union", (v == -1) | (np.isfinite(v) & (v >= 0)))
    for col in MICRO_FRACTIONS:
        if col in names:
            v = arr[col].astype(float)
            ok = np.isfinite(v) & (v >= 0) & (v <= 1)
            _bad_rows(arr, col, ok | np.isnan(v) if col == "recall" else ok)
    if "checked" in names:
        _bad_rows(arr, "checked", np.isin(arr["checked"], (0, 1)))
    if "iters" in names:
        _bad_rows(arr, "iters", arr["iters"] >= 1)
    check_micro_agreement(arr)


# A float's size: the reducers sum float32 (rb_micro -T takes mpi_float only).
ELEMENT_BYTES = 4
# Times are sums and ratios of doubles: equal up to rounding.
ROUNDING = 1e-9


def _disagree(arr, ok, what):
    """Raise Invalid naming the first row where ok fails: values that must
    agree do not (a flipped bit, a damaged file)."""
    if ok.all():
        return
    i = int(np.flatnonzero(~ok)[0])
    red = text(arr["reducer"][i]).rstrip("\0") if "reducer" in arr.dtype.names else "?"
    raise Invalid("/micro/results row %d (%s): %s does not hold: damaged (a flipped bit?)"
                  % (i, red, what % {c: text(arr[c][i]) for c in arr.dtype.names}))


def check_micro_agreement(arr):
    """Values of a row that must agree: size = element size x count = 4 x
    rows x cols; #wrong <= count in a validated row; min <= average <= max
    over ranks; p50 <= p99."""
    names = set(arr.dtype.names)
    f = {c: arr[c].astype(float) for c in micro_numeric_columns(names) + ["count", "rows", "cols"]
         if c in names}
    if {"size_bytes", "count"} <= names:
        _disagree(arr, f["size_bytes"] == ELEMENT_BYTES * f["count"],
                  "size_bytes = 4 x count (%(size_bytes)s vs %(count)s)")
    if {"count", "rows", "cols"} <= names:
        _disagree(arr, f["rows"] * f["cols"] == f["count"],
                  "rows x cols = count (%(rows)s x %(cols)s vs %(count)s)")
    if {"wrong", "count", "checked"} <= names:
        _disagree(arr, (arr["checked"] != 1) | (f["wrong"] <= f["count"]),
                  "#wrong <= count (%(wrong)s vs %(count)s)")
    if {"t_min_us", "t_avg_us", "t_max_us"} <= names:
        lo, avg, hi = f["t_min_us"], f["t_avg_us"], f["t_max_us"]
        _disagree(arr, (lo <= avg * (1 + ROUNDING)) & (avg <= hi * (1 + ROUNDING)),
                  "t_min_us <= t_avg_us <= t_max_us (%(t_min_us)s, %(t_avg_us)s, %(t_max_us)s)")
    if {"t_p50_us", "t_p99_us"} <= names:
        _disagree(arr, f["t_p50_us"] <= f["t_p99_us"] * (1 + ROUNDING),
                  "t_p50_us <= t_p99_us (%(t_p50_us)s, %(t_p99_us)s)")


# ---------------------------------------------------------------- /train

def check_train(g):
    """/train of a run: stopped early, or a final figure no run can have."""
    check_stopped(g.attrs, " in /train")
    a = g.attrs
    loss = _number(a["final_train_loss"]) if "final_train_loss" in a else None
    if loss is not None and not np.isfinite(loss):
        raise Invalid("diverged: the final training loss is %s (a run written before runs "
                      "stopped on divergence); no accuracy or perplexity is reported" % loss)
    acc = _number(a["final_test_accuracy"]) if "final_test_accuracy" in a else None
    if acc is not None and np.isfinite(acc) and not 0 <= acc <= 100:
        raise Invalid("final_test_accuracy = %g: an accuracy is 0..100%%" % acc)
    ppl = _number(a["final_val_perplexity"]) if "final_val_perplexity" in a else None
    if ppl is not None and not np.isnan(ppl) and not (np.isfinite(ppl) and ppl >= 1):
        raise Invalid("final_val_perplexity = %s: a perplexity is finite and >= 1" % ppl)
    # Image models record an accuracy, language models a perplexity (the
    # other is NaN): a run with neither measured nothing (an empty test or
    # validation split).
    if acc is not None and ppl is not None and np.isnan(acc) and np.isnan(ppl):
        raise Invalid("neither a test accuracy nor a validation perplexity was measured "
                      "(an empty test or validation split?)")


# Columns a training curve may have (rb_train's /train/curves) and what
# each may hold: NaN is "not measured" (an image model has no perplexity).
TRAIN_CURVE_RULES = {
    "iteration": ("a count", lambda v: np.isfinite(v) & (v >= 0)),
    "epoch": ("a count", lambda v: np.isfinite(v) & (v >= 0)),
    "wall_s": ("a time: >= 0, or NaN", lambda v: np.isnan(v) | (np.isfinite(v) & (v >= 0))),
    "train_loss": ("a loss: >= 0, or NaN", lambda v: np.isnan(v) | (np.isfinite(v) & (v >= 0))),
    "test_loss": ("a loss: >= 0, or NaN", lambda v: np.isnan(v) | (np.isfinite(v) & (v >= 0))),
    "train_accuracy": ("an accuracy: 0..100, or NaN", lambda v: np.isnan(v) | ((v >= 0) & (v <= 100))),
    "test_accuracy": ("an accuracy: 0..100, or NaN", lambda v: np.isnan(v) | ((v >= 0) & (v <= 100))),
    "val_perplexity": ("a perplexity: finite and >= 1, or NaN",
                       lambda v: np.isnan(v) | (np.isfinite(v) & (v >= 1))),
}
# Columns that make a table a curve (load.py's CURVE_MARKERS).
TRAIN_CURVE_MARKERS = ("test_accuracy", "val_perplexity", "accuracy", "perplexity", "train_loss")
# Attributes of /train (and of groups under it) the report reads as
# numbers: (name, must be a whole number, least value).
TRAIN_NUMBER_ATTRS = schema.number_checks(schema.attributes("/train"))


def _check_train_attrs(grp, where):
    for name, whole, least in TRAIN_NUMBER_ATTRS:
        if name not in grp.attrs:
            continue
        v = _number(grp.attrs[name])
        if v is None or not np.isfinite(v) or v < least or (whole and not float(v).is_integer()):
            raise Invalid("%s attribute %s = %s is not %s >= %d" % (
                where, name, text(grp.attrs[name]), "a whole number" if whole else "a number", least))


def _check_curve(ds, where):
    """One curve table: numbers where numbers belong, at least one row,
    values a run can have, iterations that never go back."""
    _check_number_columns(ds.dtype, TRAIN_CURVE_RULES, where)
    if ds.shape == () or len(ds) == 0:
        raise Invalid("%s holds no rows: nothing was evaluated" % where)
    arr = ds[...]
    for col, (what, ok) in TRAIN_CURVE_RULES.items():
        if col not in arr.dtype.names:
            continue
        v = arr[col].astype(float)
        good = ok(v)
        if not good.all():
            i = int(np.flatnonzero(~good)[0])
            raise Invalid("%s row %d: %s = %s is a value no run can have (%s)"
                          % (where, i, col, text(arr[col][i]), what))
    if "iteration" in arr.dtype.names and (np.diff(arr["iteration"].astype(float)) < 0).any():
        raise Invalid("%s: the iterations go back (not in the order a run evaluates)" % where)


def check_train_tables(g):
    """The tables of /train (an h5py group) and of the groups under it: every
    curve table checked (_check_curve), the numeric attributes numbers.  (A
    /train with no curve at all is left to the report, which uses no
    record without one.)"""
    import h5py

    def visit(grp, where):
        _check_train_attrs(grp, where)
        for key in sorted(grp):
            obj = grp[key]
            if isinstance(obj, h5py.Group):
                if key != "reducer_options":
                    visit(obj, "%s/%s" % (where, key))
            elif obj.dtype.names and any(c in obj.dtype.names for c in TRAIN_CURVE_MARKERS):
                _check_curve(obj, "%s/%s" % (where, key))

    visit(g, "/train")


# ---------------------------------------------------------------- whole runs

def check_run(run, attrs=None, keep=None):
    """A run (the root of a single-run file, or /runs/<name> of a merged
    archive): every rule above.  Raises Invalid.  attrs: its attributes
    when the caller has read them already (a dict, as h5py gives them);
    keep: a dict that receives the tables read here, by path under the run
    ("micro/results": the table; "micro/samples/<name>": (the dataset,
    its row (sample_row), its values as floats)), so that a caller that
    reads them next need not read them twice."""
    check_interrupted(run)
    tool = check_attrs(run.attrs if attrs is None else attrs)
    if tool == "rb_micro":
        if "micro" not in run:
            raise Invalid("an rb_micro run without /micro")
        check_micro(run["micro"], keep)
    elif "train" not in run:
        raise Invalid("an rb_train run without /train")
    else:
        check_train(run["train"])
        check_train_tables(run["train"])
    return tool


def status(run):
    """(word, reason) for a listing: complete, TIMED-OUT, DIVERGED,
    INTERRUPTED, INCOMPLETE or INVALID (reason empty when complete)."""
    try:
        check_run(run)
        return "complete", ""
    except Invalid as e:
        reason = str(e)
    if reason.startswith("stopped by its time limit"):
        return "TIMED-OUT", reason
    if reason.startswith("diverged"):
        return "DIVERGED", reason
    if reason.startswith("marked incomplete"):
        return "INCOMPLETE", reason
    if reason.startswith("interrupted"):
        return "INTERRUPTED", reason
    return "INVALID", reason


# Attributes that differ between copies of one run (where it was copied from).
COPY_ATTRS = ("source_file",)


def _bytes_of(v):
    """Stable bytes of a value (object arrays hold pointers: their text)."""
    if isinstance(v, (str, bytes)):
        return text(v).encode()
    a = np.asarray(v)
    if a.dtype.hasobject:
        return repr(a.tolist()).encode()
    return np.ascontiguousarray(a).tobytes()


def content_digest(run):
    """A digest of what a run holds (its data and attributes, not where it
    was copied from): two runs with one run_id and different digests are
    conflicting copies, neither of which can be trusted."""
    import h5py
    h = hashlib.sha256()

    def attrs_of(name, obj):
        for k in sorted(obj.attrs):
            if obj is run and k in COPY_ATTRS:
                continue
            try:
                v = read_attribute(obj, k)
            except (OSError, TypeError, ValueError):
                v = "?"
            h.update(("%s@%s=" % (name, k)).encode())
            h.update(_bytes_of(v))

    def visit(name, obj):
        attrs_of(name, obj)
        if isinstance(obj, h5py.Dataset):
            h.update(name.encode())
            try:
                h.update(_bytes_of(read_table(obj)))
            except (OSError, TypeError, ValueError):
                h.update(b"?")

    attrs_of("", run)
    run.visititems(visit)
    return h.hexdigest()
