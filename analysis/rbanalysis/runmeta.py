"""What a run's root attributes say, as the report reads them: the
attributes decoded, the run metadata under the report's column names (each
one of the archive schema's root attributes), the machine and the
network it ran on (measured, simulated, an emulated cluster), whether it
was oversubscribed or shared with other work (busy), its malloc policy.
load.py reads the tables; this module the words around them."""

import html
import os
import re

import numpy as np

from . import schema, validate


class RunRefused(Exception):
    pass


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
    read, screen.first_reads: its digest refuses the run where one cannot
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
