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
import html
import os
import re
from collections import Counter
from dataclasses import dataclass, field

import h5py
import numpy as np
import pandas as pd

from . import schema, validate

# Major schema versions this code reads (results/README.md documents them).
SUPPORTED_SCHEMA_MAJOR = validate.SUPPORTED_SCHEMA_MAJOR
KNOWN_TOOLS = validate.KNOWN_TOOLS

# Run metadata: tidy column -> the root attribute it is read from (each
# one of the archive schema's, checked below).
META_ATTRS = {
    "tool": "tool",
    "version": "version",
    "schema_version": "schema_version",
    "git_revision": "git_revision",
    "host": "hostname",
    "cluster": "slurm_cluster_name",
    "job_id": "slurm_job_id",
    "array_task": "slurm_array_task_id",
    "partition": "slurm_partition",
    "ranks": "ranks",
    "nodes": "nodes",
    "date": "start_time",
    "end_time": "end_time",
    "simulated": "simulated",
    "complete": "complete",
    "command_line": "command_line",
    "malloc_policy": "malloc_policy",
    "sim_platform": "sim_platform",
    "sim_platform_path": "sim_platform_path",
    "sim_smpi_options": "sim_smpi_options",
    "network": "network",
    "network_link_rate": "network_link_rate",
    "network_link_bps": "network_link_bps",
    "network_transport": "network_transport",
    "machines": "machines",
    "machine_ranks": "machine_ranks",
    "launcher": "launcher",
}
_UNKNOWN_META = sorted(set(META_ATTRS.values()) - set(schema.attributes("/")))
if _UNKNOWN_META:
    raise ImportError("load.py reads root attributes the archive schema does not have: "
                      + ", ".join(_UNKNOWN_META))
# Machine load around the run (benchmarks/harness/metadata.c): doubles,
# -1 when unknown; absent in archives written before they were recorded.
MACHINE_LOAD = ("machine_cores", "machine_load_before", "machine_load_after",
                "machine_other_cpu_before", "machine_other_cpu_during",
                "machine_steal_during")
# The busy rule (busy()): other processes' cores, and stolen CPU time.
BUSY_OTHER_CPU = 0.5
BUSY_STEAL = 0.05
META_COLUMNS = ("run", "file", "kind", "machine", "host", "cluster", "job_id",
                "array_task", "partition", "nodes", "version", "schema_version",
                "git_revision", "date")

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


class RunRefused(Exception):
    pass


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
    with contextlib.closing(validate.first_reads(files)) as first:
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
    """(runs, refusals) of one file.  digests: validate.first_reads' of its
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
        groups = validate.run_groups(f)
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

def decode(value):
    """HDF5 attribute -> plain Python (str, int, float, list)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray):
        if value.size == 1:
            return decode(value.reshape(-1)[0])
        return [decode(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    return value


def read_attrs(obj):
    return _decoded(_raw_attrs(obj)[0])


def _attrs_named(obj, wanted):
    """read_attrs(obj) of the attributes whose names wanted(name) accepts,
    in obj's order.  (Every attribute is read once, in full, by the first
    read, validate.first_reads: its digest refuses the run where one cannot
    be read.)"""
    raw = {}
    for k in obj.attrs:
        if wanted(k):
            try:
                raw[k] = validate.read_attribute(obj, k)
            except (OSError, TypeError, ValueError):
                raw[k] = None
    return _decoded(raw)


def _decoded(raw):
    out = {}
    for k, v in raw.items():
        try:
            out[k] = decode(v)
        except (OSError, TypeError, ValueError):
            out[k] = None
    return out


def _raw_attrs(obj):
    """({name: value as h5py gives it, None where it cannot be read},
    whether every one could be read)."""
    out, whole = {}, True
    for k in obj.attrs:
        try:
            out[k] = validate.read_attribute(obj, k)
        except (OSError, TypeError, ValueError):
            out[k], whole = None, False
    return out, whole


def normalise_meta(attrs):
    meta = {}
    for key, name in META_ATTRS.items():
        meta[key] = attrs[name] if attrs.get(name) not in ("", None) else None
    for key in MACHINE_LOAD:
        meta[key] = _as_float(attrs.get(key))
    return meta


def _as_float(value):
    """A machine_* attribute: None when absent or unknown (-1, NaN)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if np.isfinite(v) and v >= 0 else None


def busy(meta):
    """"yes" when other work shared the machine with the run: more than
    half a core busy with other processes before or during it, or more than
    5% of CPU time stolen by the hypervisor; "unknown" when none of the
    three was recorded (archives before machine_* attributes, or -1);
    else "no".  A simulated run is never busy when SimGrid charged no host
    CPU time (smpi/simulate-computation:no: its times are the platform's
    alone); otherwise it replays this host's CPU time of the reducers'
    own work, which other processes slow down, and the rule is the
    measured runs'."""
    if run_kind(meta) == "simulated" and "simulate-computation:no" in str(meta.get("sim_smpi_options") or ""):
        return "no"
    other = [meta.get("machine_other_cpu_before"), meta.get("machine_other_cpu_during")]
    steal = meta.get("machine_steal_during")
    if any(v is not None and v > BUSY_OTHER_CPU for v in other) or (
            steal is not None and steal > BUSY_STEAL):
        return "yes"
    if all(v is None for v in other + [steal]):
        return "unknown"
    return "no"


def combine_busy(flags):
    """busy() of a point made of several runs: "yes" when any run was busy,
    "unknown" when any was not recorded (and none busy), else "no"."""
    flags = set(flags)
    return "yes" if "yes" in flags else "unknown" if "unknown" in flags or not flags else "no"


def platform(meta):
    """Where the numbers come from, for the claims table: 'this machine, N
    ranks' for a measured run; 'emulated network, N nodes, RATE' for one
    across the nodes of an emulated cluster (emulated_platform); for a
    simulated one the platform's name (the base name of sim_platform_path
    without .xml, else a sim_platform attribute that is a name: rb_micro's
    holds the platform file's XML) and 'N ranks (simulated)'."""
    ranks = _as_int(meta.get("ranks"))
    n = "%s rank%s" % (ranks if ranks is not None else "?", "" if ranks == 1 else "s")
    if emulated(meta):
        return emulated_platform(meta)
    if run_kind(meta) != "simulated":
        return "this machine, %s" % n
    name = sim_platform_name(meta)
    given = meta.get("sim_platform")
    if not name and given and "<" not in str(given):
        name = str(given)
    return "%s, %s (simulated)" % (name or "unknown platform", n)


# ------------------------------------------------- emulated networks

EMULATED_PREFIX = "emulated network"


def emulated(meta):
    """A measured run across the nodes of an emulated cluster
    (jobscripts/emulated/: network namespaces of one machine, tbf-shaped
    links): root attribute network = "emulated"."""
    return run_kind(meta) == "measured" and str(meta.get("network") or "") == "emulated"


def link_rate_text(meta):
    """The emulated links' rate as the cluster gave it ('1gbit'),
    'unshaped links' for none, 'rate not recorded' when absent."""
    rate = str(meta.get("network_link_rate") or "").strip()
    if rate == "none":
        return "unshaped links"
    return rate or "rate not recorded"


def link_bps(meta):
    """The emulated links' rate in bit/s; NaN when unshaped or unknown (0)."""
    v = _as_float(meta.get("network_link_bps"))
    return v if v else float("nan")


def emulated_platform(meta):
    """'emulated network, N nodes, RATE' (', R ranks' added when the nodes
    do not hold one rank each): every launch of one cluster configuration,
    whatever launched it (srun or mpirun)."""
    nodes, ranks = _as_int(meta.get("nodes")), _as_int(meta.get("ranks"))
    text = "%s, %s node%s, %s" % (EMULATED_PREFIX, nodes if nodes is not None else "?",
                                  "" if nodes == 1 else "s", link_rate_text(meta))
    if ranks is not None and ranks != nodes:
        text += ", %d ranks" % ranks
    return text


def is_emulated_platform(text):
    return str(text).startswith(EMULATED_PREFIX)


def schema_major(value):
    if value is None:
        return None
    m = re.match(r"\s*(\d+)", str(value))
    return int(m.group(1)) if m else None


def _as_int(value, default=None):
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return default


def check_run(meta):
    """Raise RunRefused with the reason when the run's metadata says it must
    not be used (validate.check_attrs on the normalised metadata)."""
    try:
        validate.check_attrs({k: v for k, v in meta.items() if v is not None})
    except validate.Invalid as e:
        raise RunRefused(str(e))


# ---------------------------------------------------------------- one run

def _load_run(path, name, grp, digest=None):
    """The run in grp.  digest: its validate.content_digest, taken already
    (validate.first_reads), or [exception type, message] where it could not
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


def _node_pus(grp):
    """Processing units of rank 0's node (hwloc's /topology), None if unknown."""
    topo = grp.get("topology")
    if topo is None:
        return None
    a = _attrs_named(topo, ("available", "pus").__contains__)
    if _as_int(a.get("available"), 0) != 1:
        return None
    return _as_int(a.get("pus")) or None


def ranks_per_node(meta):
    ranks, nodes = _as_int(meta.get("ranks")), _as_int(meta.get("nodes")) or 1
    return -(-ranks // nodes) if ranks else None


def oversubscribed(meta):
    """A measured run whose ranks outnumbered the processing units they
    shared: its times include waiting for a core (simulated ranks share
    one host process by design and are not counted).  Where the archive
    says how many ranks ran on rank 0's machine (machine_ranks, by boot
    id: the nodes of an emulated cluster are one machine), those against
    its PUs (hwloc, else machine_cores): 4 nodes x 1 rank on 2 cores are
    oversubscribed, 2 nodes x 1 rank are not.  Older archives: ranks per
    node against the node's PUs."""
    if run_kind(meta) != "measured":
        return False
    shared = _as_int(meta.get("machine_ranks"))
    if shared is not None and shared > 0:
        limit = meta.get("pus") or _as_int(meta.get("machine_cores"))
        return bool(limit and shared > limit)
    rpn, pus = ranks_per_node(meta), meta.get("pus")
    return bool(rpn and pus and rpn > pus)


def ranks_per_core_text(meta):
    """'4 ranks on 2 PUs' of the rule oversubscribed() applied."""
    shared = _as_int(meta.get("machine_ranks"))
    if shared is not None and shared > 0:
        limit = meta.get("pus") or _as_int(meta.get("machine_cores"))
        return "%d ranks on one machine's %s PUs" % (shared, limit)
    return "%s ranks per node on %s PUs" % (ranks_per_node(meta), meta.get("pus"))


def run_kind(meta):
    return "simulated" if _as_int(meta.get("simulated"), 0) == 1 else "measured"


def sim_platform_name(meta):
    """The simulated platform's name (its file name without .xml, e.g.
    p100-ib-edr); "" for a measured run or one that does not record it."""
    path = meta.get("sim_platform_path")
    if run_kind(meta) != "simulated" or not path:
        return ""
    path = path.decode() if isinstance(path, bytes) else str(path)
    return re.sub(r"\.xml$", "", os.path.basename(path))


def run_machine(meta):
    """What makes timings comparable.  A simulation: its platform (the host
    that ran the simulator does not matter).  An emulated cluster: its
    configuration (emulated_machine), whatever the launcher.  Under Slurm the partition
    (with the cluster name when recorded): jobs land on different nodes of
    the same partition, and their repeats belong together.  Outside Slurm
    the host."""
    plat = sim_platform_name(meta)
    if plat:
        return "%s (simulated)" % plat
    if emulated(meta):
        return emulated_machine(meta)
    part = meta.get("partition")
    if part:
        cluster = meta.get("cluster")
        return "%s/%s" % (cluster, part) if cluster else "partition %s" % part
    return str(meta.get("host") or "unknown-host")


def emulated_machine(meta):
    """An emulated cluster's configuration, the same for its launches by
    srun (a partition) and by mpirun (no Slurm): nodes, link rate,
    transport."""
    transport = str(meta.get("network_transport") or "")
    return "%s: %s nodes, %s links%s" % (EMULATED_PREFIX, meta.get("nodes") or "?",
                                       link_rate_text(meta),
                                       ", %s" % transport if transport else "")
# The network a run's times come from, matched between a measured run and
# a simulation on a platform fitted to that network (simwire.py): a measured
# run's network_* attributes (the file RB_NETWORK_INFO names, e.g. an
# emulated cluster's), a simulated run's platform's <prop id="rb_network_*">
# (jobscripts/sim/platform-from-wire copies that file there).  The node
# count and the cluster's directory are not part of it.
ORIGIN_KEYS = ("network", "link_rate", "transport", "topology", "shaper")
NO_NETWORK = ("", "simulated", "one node")


def network_origin(attrs, kind):
    """'network=emulated; link_rate=1gbit; ...' or "" when the run records no
    network of its own (one node, not recorded, a platform not fitted to one)."""
    if kind == "simulated":
        xml = str(decode(attrs.get("sim_platform") or ""))
        vals = {k: html.unescape(v) for k, v in
                re.findall(r'<prop\s+id="rb_network_([A-Za-z_]+)"\s+value="([^"]*)"', xml)}
    else:
        vals = {k: str(decode(attrs.get(k if k == "network" else "network_" + k)) or "")
                for k in ORIGIN_KEYS}
        vals = {k: "" if v == "None" else v for k, v in vals.items()}
    net = vals.get("network", "")
    if net in NO_NETWORK or net.startswith("not recorded"):
        return ""
    return "; ".join("%s=%s" % (k, vals.get(k, "")) for k in ORIGIN_KEYS)


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


def compute_seconds(attrs):
    """rb_micro --compute SEC (modelled compute before each timed call),
    from a compute_s attribute when a writer records one, else from the
    command line; 0 when absent."""
    if attrs.get("compute_s") is not None:
        return float(attrs["compute_s"])
    m = re.search(r"(?:^|\s)'?--compute(?:=|'?\s+'?)([0-9.eE+-]+)", str(attrs.get("command_line") or ""))
    try:
        return float(m.group(1)) if m else 0.0
    except ValueError:
        return 0.0


def malloc_policy(meta):
    """The allocator policy in short ('keep freed memory', 'C library
    default'): runs under different ones are not compared."""
    return (meta.get("malloc_policy") or "not recorded").split(" (")[0]


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
    reducers = cols.get("reducer", [""] * n)
    cols["options"] = [options_text(o, r) for o, r in zip(opts_list, reducers)]
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


def row_options(g, i, samples_ds, results_options=None):
    """Options that applied to row i: the typed opt_<key> attributes the
    writer put on /micro/results (results_options, when already read) and
    on the row's samples dataset (samples_ds: a dataset or _samples_index's
    (dataset, values)).  rb_micro writes only the options that apply to the
    row's reducer (each reducer's own description, src/options.c), so any
    key found is kept: nothing here lists the reducers' options."""
    if results_options is None:
        results_options = options_from_attrs(_option_attrs(g["results"]))
    found = dict(results_options)
    if samples_ds is not None:
        ds = samples_ds[0] if isinstance(samples_ds, tuple) else samples_ds
        found.update(options_from_attrs(_option_attrs(ds)))
    return found


def _option_attrs(obj):
    """read_attrs(obj) of the attributes options_from_attrs looks at."""
    return _attrs_named(obj, lambda k: k.startswith("opt_"))


def options_from_attrs(attrs):
    """Reducer options from typed opt_<key> attributes (those that apply to
    the row's reducer, as the writer chose them)."""
    return {k[4:]: v for k, v in attrs.items() if k.startswith("opt_") and v is not None}


def _number(text):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def options_text(opts, reducer):
    """key=value,... of the options (the writer recorded only those that
    apply to reducer)."""
    del reducer   # kept in the signature: the callers name the row's reducer
    return ",".join("%s=%s" % (k, _fmt_opt(v)) for k, v in opts.items())


def _fmt_opt(v):
    if isinstance(v, float):
        return "%g" % v
    return str(v)


def variant_label(reducer, options):
    """A reducer with its options, minus the seed (which does not change
    what is measured, only which random instance)."""
    parts = [p for p in options.split(",") if p and not p.startswith("seed=")]
    return reducer if not parts else "%s[%s]" % (reducer, ",".join(parts))


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
