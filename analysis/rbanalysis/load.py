"""Find result files, open the runs they hold and build tidy tables.

A file holds one run (root attributes + /micro and/or /train) or, when it is
a merged archive, many runs under /runs/<name>/ (each group carrying that
run's root attributes).  Every run is checked before use; a run that cannot
be trusted is refused with a reason naming its file, and the others are
still loaded.  The refusal rules are validate.py's (rb-archive applies the
same ones), plus:

  - the file cannot be opened as HDF5 (truncated, corrupt, not HDF5);
  - a table that cannot be read;
  - two runs with one run_id and different contents (conflicting copies:
    both refused, neither can be trusted).
"""

import contextlib
import os
import re
from collections import Counter
from dataclasses import dataclass, field

import h5py
import numpy as np
import pandas as pd

from . import screen, validate
from .options import (_number, _option_attrs, options_from_attrs, options_text, row_options,
                      variant_label)
from .runmeta import (RunRefused, _as_float, _as_int, _decoded,
                      _node_pus, _raw_attrs, busy, check_run, compute_seconds, decode, emulated, link_bps,
                      malloc_policy, network_origin, normalise_meta, oversubscribed, platform, read_attrs,
                      run_kind, run_machine)

# Major schema versions this code reads (results/README.md documents them).
SUPPORTED_SCHEMA_MAJOR = validate.SUPPORTED_SCHEMA_MAJOR
KNOWN_TOOLS = validate.KNOWN_TOOLS


@dataclass
class Refusal:
    path: str
    run: str
    reason: str

    def message(self):
        where = self.path if not self.run else "%s (run %s)" % (self.path, self.run)
        return "refused %s: %s" % (where, self.reason)


@dataclass
class Run:
    path: str
    name: str            # "" for a single-run file, else the /runs/<name>
    meta: dict           # normalised metadata (META_ATTRS keys)
    attrs: dict          # every root attribute, decoded
    micro: pd.DataFrame = None
    train: list = field(default_factory=list)   # list of TrainRecord
    shown: str = ""      # the file as labels show it (default: its base name)
    digest: str = ""     # of its contents (validate.content_digest): copies agree
    # /micro's columns (micro_columns) while load() reads, until it makes
    # run.micro of them and the run's metadata
    micro_columns: dict = None

    @property
    def label(self):
        base = self.shown or os.path.basename(self.path)
        return base if not self.name else "%s:%s" % (base, self.name)


@dataclass
class TrainRecord:
    attrs: dict                  # run attrs overlaid with /train attrs
    options: dict = None         # reducer options (/train/reducer_options)
    curve: pd.DataFrame = None   # iteration, epoch, wall_s, losses, accuracy...
    phases: pd.DataFrame = None  # per-iteration forward/backward/reduce/update


@dataclass
class Archive:
    runs: list = field(default_factory=list)
    refusals: list = field(default_factory=list)
    files: list = field(default_factory=list)
    # The runs' micro tables, in their order, in a few DataFrames: runs
    # whose tables agree on their columns and types share one (micro_frames
    # gives these to concatenate, not thousands of small ones); and the
    # runs they hold (id(run)), to tell whether they are still the runs'.
    micro_parts: list = field(default_factory=list)
    micro_parts_runs: list = field(default_factory=list)


# ---------------------------------------------------------------- files

def find_files(paths):
    """Expand files and directories (recursively, *.h5 / *.hdf5 and the
    partial runs kept as *.h5.interrupted / *.h5.failed, skipping temporary
    *.tmp* names) into a sorted list; missing paths, and files
    that are no regular file (a FIFO would block the open), are refusals."""
    files, refusals = [], []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, dirs, names in os.walk(p):
                dirs.sort()
                for n in names:
                    if ".tmp" in n:
                        continue
                    # what the job scripts kept of a run that did not
                    # finish: read, so that it is listed, refused, with why
                    if n.endswith((".h5", ".hdf5")) or validate.is_kept_partial(n):
                        found.append(os.path.join(root, n))
            for f in sorted(found):
                problem = validate.file_problem(f) if os.path.exists(f) else None
                if problem:   # a dangling link is left to the open to name
                    refusals.append(Refusal(f, "", problem))
                else:
                    files.append(f)
        elif os.path.isfile(p):
            files.append(p)
        elif os.path.exists(p):
            refusals.append(Refusal(p, "", validate.file_problem(p)))
        else:
            refusals.append(Refusal(p, "", "no such file or directory"))
    seen, unique = set(), []
    for f in files:
        key = os.path.realpath(f)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique, refusals


def load(paths):
    """Load every run under paths into an Archive (runs + refusals)."""
    archive = Archive()
    files, archive.refusals = find_files(paths)
    archive.files = files
    runs = []
    # Each file is read here only once a forked child has read it whole
    # (a damaged file may crash HDF5): that child reads ahead meanwhile,
    # and its digests of the runs spare this process a second full read.
    with contextlib.closing(screen.first_reads(files)) as first:
        for path, crashed, digests in first:
            if crashed:
                archive.refusals.append(Refusal(path, "", crashed))
                continue
            found, refusals = load_file(path, digests)
            runs.extend(found)
            archive.refusals.extend(refusals)
    archive.runs, copies = _drop_copies(runs)
    archive.refusals.extend(copies)
    _unique_labels(archive.runs)
    for run in archive.runs:   # once the labels are final
        _add_meta_columns(run)
    archive.micro_parts = _make_micro_tables(archive.runs)
    archive.micro_parts_runs = [id(r) for r in _with_micro(archive.runs)]
    return archive


def _with_micro(runs):
    return [r for r in runs if r.micro is not None and len(r.micro)]


def micro_frames(archive):
    """DataFrames whose concatenation is that of the runs' micro tables (of
    those with rows), in the runs' order: the Archive's micro_parts while
    they are the runs' (as load() left them), else the runs' own."""
    runs = _with_micro(archive.runs)
    if archive.micro_parts and archive.micro_parts_runs == [id(r) for r in runs]:
        return archive.micro_parts
    return [r.micro for r in runs]


def _where(run):
    return run.path if not run.name else "%s:/runs/%s" % (run.path, run.name)


def _drop_copies(runs):
    """(kept, refusals): a run seen before is a copy and counted once.  A
    run is known by its run_id; without one (archives written before it
    existed) by the file it came from (a merged run's source_file).  Two
    runs with one run_id and different contents are conflicting copies:
    both are refused, each naming the other."""
    kept, refusals, seen, conflicted = [], [], {}, set()
    for run in runs:
        run_id = run.attrs.get("run_id")
        origin = (run.attrs.get("source_file") if run.name else None) or run.path
        key = "run_id %s" % run_id if run_id else "source file %s" % os.path.realpath(origin)
        if key in seen:
            first = seen[key]
            if run.digest != first.digest:
                refusals.append(Refusal(run.path, run.name, "conflicting copies: %s has the same "
                                        "%s but different contents; neither is used"
                                        % (_where(first), key)))
                if id(first) not in conflicted:
                    conflicted.add(id(first))
                    refusals.append(Refusal(first.path, first.name, "conflicting copies: %s has "
                                            "the same %s but different contents; neither is used"
                                            % (_where(run), key)))
                continue
            refusals.append(Refusal(run.path, run.name, "the same run as %s (%s), a copy: "
                                    "counted once" % (_where(first), key)))
            continue
        seen[key] = run
        kept.append(run)
    return [r for r in kept if id(r) not in conflicted], refusals


def _unique_labels(runs):
    """Runs are told apart by label: where two files share a base name (the
    same job script run twice writes the same names), their paths relative
    to the directory all files share are shown instead."""
    count = Counter(r.label for r in runs)
    if all(n == 1 for n in count.values()):
        return
    base = os.path.commonpath([os.path.dirname(os.path.abspath(r.path)) for r in runs])
    for r in runs:
        if count[r.label] > 1:
            r.shown = os.path.relpath(os.path.abspath(r.path), base)


def load_file(path, digests=None):
    """(runs, refusals) of one file.  digests: screen.first_reads' of its
    runs, when it has taken them (else they are taken here)."""
    runs, refusals = [], []
    try:
        f = h5py.File(path, "r")
    except (OSError, ValueError) as e:
        reason = "cannot be opened as HDF5 (truncated or corrupt?): %s" % _short(e)
        return runs, [Refusal(path, "", reason)]
    with f:
        if decode(f.attrs.get("format", "")) == "reducerbench-gradient-trace":
            return runs, refusals   # a replay's input (results/README.md), not a result
        groups = screen.run_groups(f)
        if not groups:
            return runs, [Refusal(path, "", "merged archive with no runs under /runs")]
        for name, grp in groups:
            try:
                runs.append(_load_run(path, name, grp, (digests or {}).get(name)))
            except RunRefused as e:
                refusals.append(Refusal(path, name, str(e)))
            except Exception as e:  # noqa: BLE001 -- one bad run never ends the report
                refusals.append(Refusal(path, name, "unreadable data (%s): %s"
                                        % (type(e).__name__, _short(e))))
    return runs, refusals


def _short(e):
    return _short_text(str(e), type(e).__name__)


def _short_text(message, kind):
    s = message.strip().splitlines()
    return s[0] if s else kind


# ---------------------------------------------------------------- attributes


# ------------------------------------------------- emulated networks


# ---------------------------------------------------------------- one run

def _load_run(path, name, grp, digest=None):
    """The run in grp.  digest: its validate.content_digest, taken already
    (screen.first_reads), or [exception type, message] where it could not
    be; None: taken here."""
    try:   # a fault's partial run: its reason first, not "incomplete"
        validate.check_interrupted(grp)
    except validate.Invalid as e:
        raise RunRefused(str(e))
    raw, whole = _raw_attrs(grp)
    attrs = _decoded(raw)
    meta = normalise_meta(attrs)
    check_run(meta)
    read = {}   # the tables validate reads, read once
    try:   # every rule, on the file itself (the flags, each table's values)
        # (an attribute that could not be read: validate reads them all
        # again, to name what is wrong with it)
        validate.check_run(grp, attrs=raw if whole else None, keep=read)
    except validate.Invalid as e:
        raise RunRefused(str(e))
    meta["pus"] = _node_pus(grp)
    if digest is None:
        digest = validate.content_digest(grp)
    elif isinstance(digest, list):   # what taking it raised, in the child
        kind, message = digest
        raise RunRefused("unreadable data (%s): %s" % (kind, _short_text(message, kind)))
    run = Run(path=path, name=name, meta=meta, attrs=attrs, digest=digest)
    if "micro" in grp:
        run.micro_columns = micro_columns(grp["micro"], read)
    if "train" in grp:
        run.train = read_train(grp["train"], attrs)
    if run.micro_columns is None and not run.train:
        raise RunRefused("holds neither /micro/results nor /train data")
    for rec in run.train:
        try:
            validate.check_stopped(rec.attrs, " in /train")
        except validate.Invalid as e:
            raise RunRefused(str(e))
    return run


def _add_meta_columns(run):
    """The run's metadata as columns of each of its tables (of its micro
    table's columns: _make_micro_tables makes the table)."""
    if run.micro_columns is not None:
        run.micro_columns.update(_meta_values(run, run.micro_columns))
    for df in [df for rec in run.train for df in (rec.curve, rec.phases)]:
        if df is not None:
            _add_meta_to(df, run)


# ------------------------------------------------- micro tables in one go

def _make_micro_tables(runs):
    """run.micro of each run from its micro_columns (and the micro_parts of
    the Archive).  A DataFrame per run, made one by one and concatenated,
    took half the time of a report over a thousand runs; so runs in a row
    whose columns come out of the same names and types are made into one
    DataFrame, and each run's is cut out of it: the same columns, types
    and values as its own would have had."""
    parts, group = [], []
    for run in runs:
        if run.micro_columns is None:
            continue
        n = len(run.micro_columns["row"])
        plain = _plain_columns(run.micro_columns, n) if n else None
        if plain is None:   # no rows, or a kind of value the shortcut does not know
            parts += _micro_group(group)
            group = []
            run.micro = pd.DataFrame(run.micro_columns, index=pd.RangeIndex(n))
            if n:
                parts.append(run.micro)
        else:
            if group and group[-1][2] != _types(plain):
                parts += _micro_group(group)
                group = []
            group.append((run, plain, _types(plain)))
        run.micro_columns = None
    return parts + _micro_group(group)


def _micro_group(group):
    """[the DataFrame of the (run, plain columns, their types) in group],
    each run's cut out of it; [] for none."""
    if not group:
        return []
    names = list(group[0][1])
    df = pd.DataFrame({c: np.concatenate([cols[c] for _, cols, _ in group]) for c in names})
    start = 0
    for run, cols, _ in group:
        n = len(cols["row"])
        run.micro = df.iloc[start:start + n].reset_index(drop=True)
        start += n
    return [df]


def _types(columns):
    return [(c, v.dtype) for c, v in columns.items()]


def _plain_columns(columns, n):
    """columns (lists, scalars, arrays) as the arrays of n rows pandas makes
    of them in a DataFrame; None when one is of a kind this does not know
    how pandas takes (then it is left to pandas)."""
    out = {}
    for c, v in columns.items():
        if isinstance(v, np.ndarray):
            plain = v.ndim == 1 and v.dtype.kind in "biuf" and v.dtype.isnative
            a = v if plain else _text_array(v)
        elif isinstance(v, list):
            a = _list_array(v)
        else:
            a = _scalar_array(v, n)
        if a is None or len(a) != n:
            return None
        out[c] = a
    return out


def _text_array(a):
    """An object array of str as it is (pandas keeps it so), else None."""
    if a.ndim == 1 and a.dtype == object and all(type(x) is str for x in a):
        return a
    return None


def _list_array(values):
    """The array pandas makes of a list: object for str, float64 for
    floats, else what pandas itself infers."""
    if all(type(x) is str for x in values):
        return _objects(values)
    if all(type(x) is float for x in values):
        return np.array(values, dtype=np.float64)
    a = pd.Series(values).to_numpy()
    return a if a.dtype.kind in "biufO" else None


def _scalar_array(v, n):
    """n times a scalar, of the type pandas gives a column of it."""
    if type(v) is str:
        return _constant(v, n)
    if type(v) is bool:
        return np.full(n, v, dtype=np.bool_)
    if type(v) is int and -2 ** 63 <= v < 2 ** 63:
        return np.full(n, v, dtype=np.int64)
    if type(v) is float:
        return np.full(n, v, dtype=np.float64)
    return None


def _add_meta_to(df, run):
    for k, v in _meta_values(run, df.columns).items():
        df[k] = v


def _meta_values(run, columns):
    """{column: value} of the run's metadata for a table with columns
    (ranks only where the table has none)."""
    m = run.meta
    values = {
        "run": run.label, "file": run.path, "kind": run_kind(m), "machine": run_machine(m),
        "malloc": malloc_policy(m),
        "host": m["host"], "cluster": m["cluster"], "job_id": m["job_id"],
        "array_task": m["array_task"], "partition": m["partition"],
        "nodes": _as_int(m["nodes"]), "version": m["version"],
        "schema_version": m["schema_version"], "git_revision": m["git_revision"],
        "date": m["date"],
    }
    out = {k: v if v is not None else "" for k, v in values.items()}
    out["run_id"] = run.attrs.get("run_id") or run.label
    out["compute_s"] = compute_seconds(run.attrs)
    out["oversubscribed"] = oversubscribed(m)
    out["busy"] = busy(m)
    out["platform"] = platform(m)
    out["link_bps"] = link_bps(m) if emulated(m) else float("nan")
    # the cost model's seconds per byte (rb_micro's model column used it)
    beta = _as_float(run.attrs.get("model_beta_s_per_byte"))
    out["model_beta_s_per_byte"] = beta if beta is not None else float("nan")
    out["origin"] = network_origin(run.attrs, run_kind(m))
    other = m.get("machine_other_cpu_during")
    out["other_cpu_during"] = np.nan if other is None else other
    if "ranks" not in columns:
        out["ranks"] = _as_int(m["ranks"])
    return out


# ---------------------------------------------------------------- micro

# Columns a row only measures when it was validated (checked=1).
UNCHECKED_UNKNOWN = ("wrong", "rel_l2_err", "recall", "max_abs_err", "consensus")


def read_micro(g):
    """/micro's table (micro_columns) as a DataFrame, without the run's
    metadata."""
    columns = micro_columns(g)
    return pd.DataFrame(columns, index=pd.RangeIndex(len(columns["row"])))


def micro_columns(g, read=None):
    """{column: values} of /micro's table, in order: /micro/results' columns
    (text decoded), each row's index, the columns of later writers an older
    file lacks, what each row's options and samples say.  read: what
    validate.check_run read of them already (its keep)."""
    arr = (read or {}).get("micro/results")
    if arr is None:
        if "results" not in g:
            raise RunRefused("/micro has no results table")
        arr = validate.read_table(g["results"])
    if arr.dtype.names is None:
        raise RunRefused("/micro/results is not a compound table")
    n = len(arr)
    cols = _results_columns(arr)
    cols["row"] = np.arange(n)
    fill_later_columns(cols, n)
    if "repeat" not in cols:   # written before rb_micro --repeat (-r then): one repetition per row
        cols["repeat"] = np.zeros(n, dtype=np.int64)
    if "input" not in cols:   # written before rb_micro --input
        cols["input"] = _constant("dense", n)
    if "checked" in cols:
        # An unvalidated row (--no-check) measured no error: unknown, not 0.
        unchecked = np.asarray(cols["checked"]) == 0
        for col in UNCHECKED_UNKNOWN:
            if col in cols:
                cols[col] = np.where(unchecked, np.nan, np.asarray(cols[col]).astype(float))
    samples = _samples_index(g, read)
    # /micro/results' own attributes, read once for all its rows
    results_options = options_from_attrs(_option_attrs(g["results"]))
    opts_list = [row_options(g, i, samples.get(i), results_options) for i in range(n)]
    cols["options"] = [options_text(o) for o in opts_list]
    for key in sorted(set(k for o in opts_list for k in o)):
        cols["opt_" + key] = [o.get(key) for o in opts_list]
    cols["variant"] = [variant_label(r, t) for r, t in zip(cols["reducer"], cols["options"])]
    q = _rows_quartiles([samples.get(i) for i in range(n)])
    cols["iter_q25_us"] = [v[0] for v in q]
    cols["iter_q50_us"] = [v[1] for v in q]
    cols["iter_q75_us"] = [v[2] for v in q]
    return cols


def _results_columns(arr):
    """{column: values} of a compound table: numbers as numpy gives them,
    fixed-length text decoded (str, no NUL padding); any other kind of
    column the way pandas reads a structured array."""
    if not all(arr.dtype[c].kind in "biufS" and not arr.dtype[c].shape and arr.dtype[c].isnative
               for c in arr.dtype.names):
        df = pd.DataFrame(arr)
        for col in df.columns:
            if df[col].dtype == object:
                df[col] = df[col].map(lambda v: v.decode("utf-8", "replace").rstrip("\0")
                                      if isinstance(v, bytes) else v)
        return {c: df[c].to_numpy() for c in df.columns}
    out = {}
    for c in arr.dtype.names:
        if arr.dtype[c].kind == "S":
            out[c] = _objects([v.decode("utf-8", "replace").rstrip("\0") for v in arr[c].tolist()])
        else:
            out[c] = arr[c].copy()
    return out


def _objects(values):
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _constant(value, n):
    return _objects([value] * n)


# Columns rb_micro added after its first archives (validate.py's
# MICRO_REQUIRED are the first ones): absent in an older file, they are
# unknown (NaN), never a guessed value.  "device" is text: "unknown".
LATER_NUMERIC_COLUMNS = (
    "count", "slowest_rank", "t_encode_us", "t_comm_us", "t_decode_us", "algbw_gbs",
    "busbw_gbs", "nnz_local_avg", "nnz_union", "bound_bytes", "wire_to_bound", "checked", "wrong",
    "rel_l2_err", "recall", "max_abs_err", "consensus", "t_model_us", "model_ratio",
    "t_floor_us", "msgs_sent_avg", "msgs_sent_max", "union_rows", "union_ratio",
    "nnz_local_max", "imbalance", "step")


def fill_later_columns(df, n):
    """df: a dict (or a DataFrame) of n rows' columns."""
    for col in LATER_NUMERIC_COLUMNS:
        if col not in df:
            df[col] = np.full(n, np.nan)
    if "device" not in df:
        df["device"] = _constant("unknown", n)


def _samples_index(g, read=None):
    """{row index: (samples dataset, its values or None)}; names are the row
    index (any padding).  read: validate.check_run's keep, which holds the
    datasets it read, their rows and values."""
    out = {}
    if "samples" not in g or not isinstance(g["samples"], h5py.Group):
        return out
    samples = g["samples"]
    for key in samples:
        kept = (read or {}).get("micro/samples/" + key)
        if kept is not None:
            obj, idx, values = kept
        else:
            obj, values = samples[key], None
            idx = validate.sample_row(obj, key) if isinstance(obj, h5py.Dataset) else None
        if idx is not None:
            out[idx] = (obj, values)
    return out


def sample_quartiles(ds):
    """Quartiles of the per-iteration time of the slowest rank (the time the
    operation took), from the raw iterations x ranks samples (ds: the
    dataset, or _samples_index's (dataset, values))."""
    return _rows_quartiles([ds])[0]


def _rows_quartiles(samples):
    """sample_quartiles of each of samples, those of one length computed
    together (np.percentile along an axis gives each row's own numbers)."""
    out = [(np.nan, np.nan, np.nan)] * len(samples)
    by_length = {}
    for i, ds in enumerate(samples):
        if ds is None:
            continue
        ds, a = ds if isinstance(ds, tuple) else (ds, None)
        if a is None:
            a = np.asarray(ds[...], dtype=float)
        if a.size == 0:
            continue
        per_iter = a.max(axis=1) if a.ndim == 2 else a.reshape(-1)
        by_length.setdefault(len(per_iter), []).append((i, per_iter))
    for rows in by_length.values():
        q = np.percentile(np.stack([a for _, a in rows]), [25, 50, 75], axis=1)
        for (i, _), v in zip(rows, q.T):
            out[i] = tuple(float(x) for x in v)
    return out


# ---------------------------------------------------------------- train

CURVE_MARKERS = ("test_accuracy", "val_perplexity", "accuracy", "perplexity", "train_loss")
PHASE_NAMES = ("forward", "backward", "reduce", "update")


def read_train(g, run_attrs):
    """Every group under /train (itself included) that holds a curve is one
    training record; attributes are inherited from the run and the parents."""
    records = []

    def visit(grp, inherited):
        attrs = dict(inherited)
        attrs.update(read_attrs(grp))
        curve, phases = _train_tables(grp)
        if curve is not None or phases is not None:
            opts = None
            if "reducer_options" in grp:
                opts = {k: _number(v) if isinstance(v, str) else v
                        for k, v in read_attrs(grp["reducer_options"]).items()}
            records.append(TrainRecord(attrs=attrs, options=opts, curve=curve, phases=phases))
        for key in sorted(grp):
            if isinstance(grp[key], h5py.Group) and key != "reducer_options":
                visit(grp[key], attrs)

    visit(g, run_attrs)
    return records


def _table(ds):
    arr = ds[...]
    if arr.dtype.names is None:
        return None
    df = pd.DataFrame(arr)
    for col in df.columns:
        if df[col].dtype == object:
            df[col] = df[col].map(lambda v: v.decode() if isinstance(v, bytes) else v)
    return df


def _train_tables(grp):
    """(curve, phases) DataFrames from compound tables, or from 1-D column
    datasets of equal length directly in grp."""
    curve = phases = None
    columns = {}
    for key in grp:
        obj = grp[key]
        if not isinstance(obj, h5py.Dataset):
            continue
        if obj.dtype.names:
            df = _table(obj)
            if df is None:
                continue
            if curve is None and any(c in df.columns for c in CURVE_MARKERS):
                curve = df
            elif phases is None and _phase_columns(df):
                phases = df
        elif obj.ndim == 1 and obj.dtype.kind in "iuf":
            columns[key] = obj[...]
    if columns and (curve is None or phases is None):
        lengths = {}
        for k, v in columns.items():
            lengths.setdefault(len(v), {})[k] = v
        for cols in lengths.values():
            df = pd.DataFrame(cols)
            if curve is None and any(c in df.columns for c in CURVE_MARKERS):
                curve = df
            elif phases is None and _phase_columns(df):
                phases = df
    return curve, phases


def _phase_columns(df):
    """{phase: column} for columns naming forward/backward/reduce/update."""
    out = {}
    for ph in PHASE_NAMES:
        for c in df.columns:
            if re.fullmatch(r"(t_)?%s(_s|_us|_ms)?" % ph, str(c)):
                out[ph] = c
                break
    return out if len(out) >= 2 else {}
