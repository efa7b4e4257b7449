"""The report's words: the claims table's columns, the glossary and the
latency table's column notes (report.py, report_sections.py)."""


# The claim, the paper's number and how it is read head each claim's rows
# (claim_sections); the rows say where and what was measured.
CLAIM_COLUMNS = {"platform": "platform", "data": "data", "oversubscribed": "oversub.",
                 "busy": "busy", "launches": "launches", "measured": "measured",
                 "verdict": "verdict"}


GLOSSARY = (
    ("dense", "MPI_Allreduce of the whole gradient buffer: the exact reference"),
    ("none", "no communication (local SGD): the compute-efficiency reference"),
    ("agsparse", "allgather of (index, value) pairs and a local sum: exact"),
    ("sparcml", "SparCML's sparse recursive doubling, switching to dense as it fills in: exact"),
    ("parallax", "Parallax's sparse parameter server, indices sharded over ranks: exact"),
    ("omnireduce", "OmniReduce's bitmap of non-zero blocks, blocks sum-allreduced: exact"),
    ("oktopk", "Ok-Topk's sparse allreduce (PPoPP'22), exact unless oktopk_select=topk"),
    ("zen", "Zen's sparse allreduce (OSDI'25), indices hash-partitioned over ranks: exact"),
    ("s2", "S2 Reducer: a bitmap of non-zero rows plus a count sketch: approximate"),
    ("gossip", "GossipGraD: each rank averages with one partner per step: approximate"),
    ("validated", "a reducer's rows in which no check found a wrong value (an unchecked "
                  "run, e.g. simulated, still counts); only validated baselines are compared"),
    ("nnz", "number of non-zero values (per rank, or of the union over ranks)"),
    ("busbw", "bus bandwidth in GB/s: the algorithm bandwidth (size / time, algbw) scaled "
              "by 2(p-1)/p as for an allreduce, comparable across rank counts"),
    ("launch", "one start of the benchmark's processes; intervals over launches include "
               "launch-to-launch variation"),
    ("exact", "a value every repetition gave alike (bytes): no interval needed"),
    ("oversubscribed / busy", "more ranks than cores / other processes on the machine: "
                              "such times never make the headline"),
    ("95% CI", "the 95% confidence interval of a median (from 6 repetitions on)"),
)


LATENCY_COLUMNS = ("n = repetitions; samples = timed calls behind them; CI = 95% confidence interval "
                   "of the median; iter IQR = interquartile range of one run's per-iteration times; "
                   "busbw = bus bandwidth (Key)")
