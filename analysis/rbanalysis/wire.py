"""How much of a point's time the wire explains, on an emulated network
(jobscripts/emulated/: the nodes are network namespaces of one machine,
their links shaped to network_link_bps by tbf on both ends).

A rank's link carries what it sends one way and what it receives the
other, each at the link rate, so one call cannot take less than

  wire floor = max(bytes sent, bytes received) of the busiest rank x 8
               / network_link_bps

with the bytes as rb_stats counts them (docs/wire-bytes.md): payload only
(no TCP/IP or MPI headers, about 3% at a 1500-byte MTU), point-to-point
messages exactly, collectives as the bandwidth-optimal algorithm moves them
(an allreduce of B: 2(p-1)/p B each way).  An MPI library that picks
another algorithm moves more (Open MPI's reduce + bcast sends the whole
buffer each way in turn): the floor stays a floor.  Archives without the
received counts (bytes_recv_*) are taken as symmetric: received = sent.

The wire's share of the time = floor / (median time - the modelled
compute of rb_micro --compute, which the timed call includes).  Below
CPU_BOUND_SHARE the point is marked CPU_BOUND: the link is not what makes
it slow (the CPU, shared by every node of the emulated cluster, or
per-message latency), so a faster link would not speed it up much and a
comparison there measures the machine, not the network.
"""

import numpy as np
import pandas as pd

CPU_BOUND_SHARE = 0.5
CPU_BOUND = "CPU- or latency-bound"
WIRE_BOUND = "wire-bound"
COLUMNS = ("wire_bytes", "wire_floor_us", "wire_share", "wire_bound")


def busiest_bytes(r):
    """Bytes per call on the busiest rank's link, in its busier direction:
    max(bytes sent, bytes received) over ranks (medians over the point's
    repetitions); received = sent when the archive lacks it."""
    sent = _largest(r, ("bytes_sent_max_median", "bytes_sent_avg_median"))
    recv = _largest(r, ("bytes_recv_max_median", "bytes_recv_avg_median"))
    if not np.isfinite(recv) or not recv > 0:
        recv = sent
    return max(sent, recv) if np.isfinite(sent) else np.nan


def _largest(r, names):
    """The largest finite value of r's columns names (the busiest rank's
    count, or the mean where a writer left the maximum out); NaN if none."""
    found = []
    for n in names:
        try:
            v = float(r.get(n, np.nan))
        except (TypeError, ValueError):
            continue
        if np.isfinite(v):
            found.append(v)
    return max(found) if found else np.nan


def floor_us(nbytes, link_bps):
    """The time nbytes take on a link of link_bps, in microseconds."""
    if not (np.isfinite(nbytes) and np.isfinite(link_bps) and link_bps > 0):
        return np.nan
    return nbytes * 8.0 / link_bps * 1e6


def share(floor, t_us, compute_s=0.0):
    """The wire's share of a call: floor / (time - modelled compute)."""
    t = float(t_us) - 1e6 * float(compute_s or 0.0)
    if not (np.isfinite(floor) and floor > 0 and np.isfinite(t) and t > 0):
        return np.nan
    return floor / t


def bound(s):
    """CPU_BOUND below CPU_BOUND_SHARE, WIRE_BOUND at or above, '' unknown."""
    if not np.isfinite(s):
        return ""
    return CPU_BOUND if s < CPU_BOUND_SHARE else WIRE_BOUND


def add_floor(agg):
    """agg (micro.summarise_repeats) with COLUMNS added: the wire floor of
    each point on an emulated network (link_bps known), its share of the
    median time and the mark; NaN / '' elsewhere."""
    if agg.empty:
        return agg
    link = agg["link_bps"] if "link_bps" in agg else pd.Series(np.nan, index=agg.index)
    nbytes = [busiest_bytes(r) for _, r in agg.iterrows()]
    floors = [floor_us(b, l) for b, l in zip(nbytes, link)]
    compute = agg["compute_s"] if "compute_s" in agg else pd.Series(0.0, index=agg.index)
    shares = [share(f, t, c) for f, t, c in zip(floors, agg["t_avg_us_median"], compute)]
    agg = agg.copy()
    agg["wire_bytes"] = [b if np.isfinite(l) else np.nan for b, l in zip(nbytes, link)]
    agg["wire_floor_us"] = floors
    agg["wire_share"] = shares
    agg["wire_bound"] = [bound(s) for s in shares]
    return agg


def share_text(s, mark):
    """'38% (CPU- or latency-bound)', '92%', or '-' for a table cell."""
    if not np.isfinite(s):
        return "-"
    return "%.0f%%%s" % (100 * s, " (%s)" % mark if mark == CPU_BOUND else "")


# What the per-point tables show of it (columns absent elsewhere are
# dropped by the table writer: they appear only for emulated points).
SHOWN = {"wire_floor_us": "wire floor us", "wire_text": "wire share"}


def annotate(df, share_col="wire_share", mark_col="wire_bound", out="wire_text"):
    """df with a text column for the wire's share and its mark."""
    if df.empty or share_col not in df:
        return df
    marks = df[mark_col] if mark_col in df else [bound(s) for s in df[share_col]]
    return df.assign(**{out: [share_text(float(s), m) for s, m in zip(df[share_col], marks)]})
