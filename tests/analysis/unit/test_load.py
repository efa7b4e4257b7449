#!/usr/bin/python3
"""analysis/rbanalysis/load.py, function by function, on run metadata as
the archives hold it (root attributes, benchmarks/harness/metadata.c):
busy (the machine_* attributes against the busy rule, -1 or absent as
unknown), combine_busy over the runs of a point, oversubscription,
where a run's numbers come from (platform, run_machine), which files
find_files hands on (never a FIFO, whose open would wait for a writer),
and the micro tables load() makes in one go (each run's own)."""

import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from run_pytest import main
    sys.exit(main(__file__))

import pytest

from rbanalysis import load, runmeta

QUIET = {"tool": "rb_micro", "ranks": 2, "machine_cores": 2.0, "machine_load_before": 0.1,
         "machine_load_after": 0.2, "machine_other_cpu_before": 0.05,
         "machine_other_cpu_during": 0.1, "machine_steal_during": 0.0}


def meta(**attrs):
    """The normalised metadata of a run with these root attributes."""
    return runmeta.normalise_meta(dict(QUIET, **attrs))


# ------------------------------------------------------------------ busy

def test_busy_rule_constants():
    assert (runmeta.BUSY_OTHER_CPU, runmeta.BUSY_STEAL) == (0.5, 0.05)


@pytest.mark.parametrize("attrs, want", [
    ({}, "no"),
    ({"machine_other_cpu_during": 0.6}, "yes"),    # other processes during the run
    ({"machine_other_cpu_before": 1.4}, "yes"),    # ... or just before it
    ({"machine_other_cpu_during": 0.5}, "no"),     # half a core is still quiet
    ({"machine_steal_during": 0.06}, "yes"),       # the hypervisor took > 5%
    ({"machine_steal_during": 0.05}, "no"),
    ({"machine_load_before": 7.0}, "no"),          # the load average alone is no rule
])
def test_busy(attrs, want):
    assert runmeta.busy(meta(**attrs)) == want


def test_busy_unknown_when_nothing_was_recorded():
    unknown = {k: -1.0 for k in ("machine_other_cpu_before", "machine_other_cpu_during",
                                 "machine_steal_during")}
    assert runmeta.busy(meta(**unknown)) == "unknown"
    old = {k: v for k, v in QUIET.items() if not k.startswith("machine_")}
    assert runmeta.busy(runmeta.normalise_meta(old)) == "unknown"
    assert runmeta.busy(meta(machine_other_cpu_during="n/a", machine_other_cpu_before=float("nan"),
                          machine_steal_during=-1)) == "unknown"


def test_busy_one_recorded_value_decides():
    partly = {"machine_other_cpu_before": -1.0, "machine_steal_during": -1.0}
    assert runmeta.busy(meta(**partly)) == "no"
    assert runmeta.busy(meta(**dict(partly, machine_other_cpu_during=0.9))) == "yes"


def test_a_simulation_that_charges_no_host_cpu_is_never_busy():
    off = "--cfg=smpi/host-speed:1Gf --cfg=smpi/simulate-computation:no"
    assert runmeta.busy(meta(simulated=1, sim_smpi_options=off, machine_other_cpu_during=1.9)) == "no"
    assert runmeta.busy(meta(simulated=0, machine_other_cpu_during=1.9)) == "yes"


def test_a_simulation_that_replays_host_cpu_time_can_be_busy():
    # S2's points replay the reducers' CPU time on this host: other
    # processes slow it down (a loaded run's speedup read 1.82x, a quiet
    # one's 1.24x).
    on = "--cfg=smpi/host-speed:1Gf --cfg=smpi/coll-selector:ompi"
    assert runmeta.busy(meta(simulated=1, sim_smpi_options=on, machine_other_cpu_during=1.9)) == "yes"
    assert runmeta.busy(meta(simulated=1, sim_smpi_options=on)) == "no"


@pytest.mark.parametrize("flags, want", [
    (["no", "no"], "no"),
    (["no", "yes", "unknown"], "yes"),
    (["no", "unknown"], "unknown"),
    ([], "unknown"),
])
def test_combine_busy(flags, want):
    assert runmeta.combine_busy(flags) == want


# ------------------------------------------------------- oversubscription

def test_oversubscribed():
    assert runmeta.oversubscribed(dict(meta(ranks=4), pus=2)) is True
    assert runmeta.oversubscribed(dict(meta(ranks=2), pus=2)) is False
    assert runmeta.oversubscribed(dict(meta(ranks=8, nodes=4), pus=2)) is False
    assert runmeta.oversubscribed(dict(meta(ranks=4), pus=None)) is False      # not known
    assert runmeta.oversubscribed(dict(meta(ranks=128, simulated=1), pus=2)) is False


def test_ranks_per_node_rounds_up():
    assert runmeta.ranks_per_node(meta(ranks=5, nodes=2)) == 3
    assert runmeta.ranks_per_node(meta(ranks=None)) is None


# ------------------------------------------------ where the numbers come from

def test_platform():
    assert runmeta.platform(meta(ranks=1)) == "this machine, 1 rank"
    assert runmeta.platform(meta(ranks=4)) == "this machine, 4 ranks"
    sim = meta(ranks=128, simulated=1, sim_platform_path="/x/platforms/p100-ib-edr.xml",
               sim_platform="<?xml version='1.0'?><platform/>")
    assert runmeta.platform(sim) == "p100-ib-edr, 128 ranks (simulated)"
    named = meta(ranks=64, simulated=1, sim_platform="knl-aries")
    assert runmeta.platform(named) == "knl-aries, 64 ranks (simulated)"


def test_run_machine():
    assert runmeta.run_machine(meta(hostname="node7")) == "node7"
    assert runmeta.run_machine(meta(hostname="node7", slurm_partition="gpu")) == "partition gpu"
    assert runmeta.run_machine(meta(hostname="n", slurm_partition="gpu",
                                 slurm_cluster_name="daint")) == "daint/gpu"
    assert runmeta.run_machine(meta(simulated=1, sim_platform_path="eth1g.xml",
                                 hostname="laptop")) == "eth1g (simulated)"


# ------------------------------------------------------------ find_files

def test_find_files_refuses_what_is_no_regular_file(tmp_path):
    (tmp_path / "a.h5").write_bytes(b"x")
    os.mkfifo(tmp_path / "fifo.h5")
    (tmp_path / "sub.h5").mkdir()       # a directory named *.h5 is walked into
    files, refusals = load.find_files([str(tmp_path)])
    assert files == [str(tmp_path / "a.h5")]
    assert [(r.path, r.reason) for r in refusals] == \
        [(str(tmp_path / "fifo.h5"), "not a regular file (a FIFO): not read")]
    files, refusals = load.find_files([str(tmp_path / "fifo.h5"), str(tmp_path / "no.h5")])
    assert files == []
    assert [r.reason for r in refusals] == ["not a regular file (a FIFO): not read",
                                            "no such file or directory"]


# ------------------------------------------------------ emulated networks

EMULATED = {"network": "emulated", "network_link_rate": "1gbit", "network_link_bps": 1e9,
            "network_transport": "tcp", "machines": 1, "hostname": "node1"}


def test_platform_of_an_emulated_network():
    m = meta(ranks=2, nodes=2, machine_ranks=2, **EMULATED)
    assert runmeta.platform(m) == "emulated network, 2 nodes, 1gbit"
    assert runmeta.emulated(m) and runmeta.is_emulated_platform(runmeta.platform(m))
    assert runmeta.link_bps(m) == 1e9
    # ranks that are not one per node are said
    assert runmeta.platform(meta(ranks=4, nodes=2, **EMULATED)) == "emulated network, 2 nodes, 1gbit, 4 ranks"
    assert runmeta.platform(meta(ranks=2, nodes=2, **dict(EMULATED, network_link_rate="none",
                                                          network_link_bps=0.0))) == \
        "emulated network, 2 nodes, unshaped links"
    # one node, or a network written by an older rb_micro: this machine
    assert runmeta.platform(meta(ranks=2, network="one node")) == "this machine, 2 ranks"
    assert runmeta.platform(meta(ranks=2)) == "this machine, 2 ranks"
    assert not runmeta.is_emulated_platform("this machine, 2 ranks")


def test_launches_of_one_emulated_cluster_share_a_machine_whatever_the_launcher():
    srun = meta(ranks=2, nodes=2, slurm_partition="p100", launcher="srun", **EMULATED)
    mpirun = meta(ranks=2, nodes=2, launcher="mpirun", **dict(EMULATED, hostname="node2"))
    assert runmeta.run_machine(srun) == runmeta.run_machine(mpirun) == \
        "emulated network: 2 nodes, 1gbit links, tcp"
    other_rate = meta(ranks=2, nodes=2, **dict(EMULATED, network_link_rate="10gbit",
                                               network_link_bps=1e10))
    four = meta(ranks=4, nodes=4, **EMULATED)
    assert len({runmeta.run_machine(m) for m in (srun, other_rate, four)}) == 3


@pytest.mark.parametrize("attrs, pus, want", [
    # ranks sharing one machine's cores (machine_ranks, by boot id)
    ({"ranks": 4, "nodes": 4, "machine_ranks": 4}, 2, True),     # 4 emulated nodes on 2 cores
    ({"ranks": 2, "nodes": 2, "machine_ranks": 2}, 2, False),    # 2 emulated nodes on 2 cores
    ({"ranks": 8, "nodes": 4, "machine_ranks": 2}, 2, False),    # 4 real machines, 2 ranks each
    ({"ranks": 4, "nodes": 4, "machine_ranks": 4}, None, True),  # no hwloc: machine_cores (2)
    ({"ranks": 4, "nodes": 4, "machine_ranks": 4, "machine_cores": 8.0}, None, False),
    # older archives without machine_ranks: ranks per node against the PUs
    ({"ranks": 4, "nodes": 4}, 2, False),
    ({"ranks": 4, "nodes": 1}, 2, True),
    ({"ranks": 4, "nodes": 4, "machine_ranks": 4, "simulated": 1}, 2, False),
])
def test_oversubscribed_by_machine(attrs, pus, want):
    assert runmeta.oversubscribed(dict(meta(**attrs), pus=pus)) is want


def test_oversubscription_is_explained_by_the_rule_applied():
    assert runmeta.ranks_per_core_text(dict(meta(ranks=4, nodes=4, machine_ranks=4), pus=2)) == \
        "4 ranks on one machine's 2 PUs"
    assert runmeta.ranks_per_core_text(dict(meta(ranks=4, nodes=1), pus=2)) == \
        "4 ranks per node on 2 PUs"


# ------------------------------------------- micro tables made in one go

def test_micro_tables_made_in_one_go_are_each_runs_own(tmp_path):
    """load() makes the micro tables of runs that agree on their columns
    and types as one DataFrame, and cuts each run's out of it: each is the
    DataFrame the run's own columns make, and micro_rows (their
    concatenation) what concatenating those gives."""
    import h5py
    import numpy as np
    import pandas as pd
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from synth import write_micro
    from rbanalysis import micro

    def rows(reducer, t):
        return [{"reducer": reducer, "size_bytes": s, "t_avg_us": t * s / 4096.0, "repeat": k}
                for s in (4096, 8192) for k in range(2)]

    specs = [("a", rows("s2", 10.0), {"sketch_width": 0.5}, ()),
             ("b", rows("s2", 11.0), {"sketch_width": 0.25}, ()),   # as a: one DataFrame
             ("c", rows("dense", 9.0), None, [("extra", "<f8")]),    # a column more
             ("d", rows("gossip", 12.0), {"seed": 3}, ()),           # an integer option
             ("e", rows("s2", 10.5), {"sketch_width": 0.5}, ()),
             ("f", rows("gossip", 12.5), {"seed": np.array([1, 2])}, ())]   # a list
    for name, r, options, columns in specs:
        write_micro(str(tmp_path / ("%s.h5" % name)), r, options=options, columns=columns)
    archive = load.load([str(tmp_path)])
    assert [r.label for r in archive.runs] == ["%s.h5" % s[0] for s in specs]
    own = []
    for run in archive.runs:
        with h5py.File(run.path, "r") as f:
            cols = load.micro_columns(f["micro"])
        cols.update(load._meta_values(run, cols))
        own.append(pd.DataFrame(cols, index=pd.RangeIndex(len(cols["row"]))))
        pd.testing.assert_frame_equal(run.micro, own[-1], check_exact=True)
        assert list(run.micro.dtypes) == list(own[-1].dtypes)
    assert len(archive.micro_parts) < len(archive.runs)
    want = pd.concat(own, ignore_index=True, sort=False)
    got = pd.concat(load.micro_frames(archive), ignore_index=True, sort=False)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got.dtypes) == list(want.dtypes)
    assert len(micro.micro_rows(archive)) == len(want)
    # runs left out after load(): the runs' own tables, not the parts
    archive.runs = archive.runs[1:]
    assert load.micro_frames(archive) == [r.micro for r in archive.runs]
