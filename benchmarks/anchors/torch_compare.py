#!/usr/bin/python3
"""rb_train against its PyTorch anchors (torch_lenet.py, torch_wordlm.py),
interleaved, with the ratio of each round.

Timing (default): for each round, model and thread count, the anchor and
rb_train run the same steps one after the other (which goes first
alternates by round) and each reports its forward+backward seconds in its
`timing:` line; printed per run, then per model and thread count the
median and range of each and of the ratio rb_train / PyTorch taken within
each round (the machine's load moves both alike), with the load average
before each round.

Accuracy (--epoch): one epoch of each, every seed of --seeds, on
--threads' first count: test accuracy (lenet) or validation perplexity
(wordlm) of each and the mean.

    benchmarks/anchors/torch_compare.py --rb-train build/benchmarks/rb_train
    benchmarks/anchors/torch_compare.py --epoch --seeds 1,2,3
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROG = "torch_compare.py"
TIMING = re.compile(r"^timing: rank 0 forward\+backward ([0-9.]+) s", re.M)
FINAL = re.compile(r"^final: .*?(test_accuracy|val_perplexity) ([0-9.]+)", re.M)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write("%s: %s (see --help)\n" % (self.prog, message))
        sys.exit(2)


def int_list(s):
    try:
        v = [int(x) for x in s.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a comma-separated list of integers" % s)
    if not v or min(v) < 1:
        raise argparse.ArgumentTypeError("'%s': every value must be >= 1" % s)
    return v


def model_list(s):
    v = s.split(",")
    bad = [m for m in v if m not in ("lenet", "wordlm")]
    if bad:
        raise argparse.ArgumentTypeError("'%s' is not lenet or wordlm" % bad[0])
    return v


def run(cmd, env):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                       universal_newlines=True)
    if p.returncode != 0:
        sys.stderr.write("%s: %s exited %d:\n%s" % (PROG, " ".join(cmd), p.returncode,
                                                    p.stdout[-2000:]))
        sys.exit(1)
    return p.stdout


def commands(a, model, threads, steps, seed=1):
    anchor = [sys.executable, os.path.join(HERE, "torch_%s.py" % model), "--threads",
              str(threads), "--seed", str(seed)]
    rb = [a.rb_train, "--model", model, "--threads", str(threads), "--seed", str(seed), "-o",
          "none"]
    if steps:
        anchor += ["--iterations", str(steps), "--no-eval"]
        rb += ["--iterations", str(steps)]
    return anchor, rb


def spread(v):
    return "%.3f (%.3f-%.3f)" % (statistics.median(v), min(v), max(v))


def timing(a, env):
    steps = {"lenet": a.lenet_steps, "wordlm": a.wordlm_steps}
    res = {}
    for r in range(a.rounds):
        print("round %d: load average %.2f %.2f %.2f" % ((r + 1,) + os.getloadavg()), flush=True)
        for model in a.models:
            for t in a.threads:
                anchor, rb = commands(a, model, t, steps[model])
                order = [("PyTorch", anchor), ("rb_train", rb)]
                if r % 2:
                    order.reverse()
                got = {}
                for name, cmd in order:
                    m = TIMING.search(run(cmd, env))
                    if not m:
                        sys.stderr.write("%s: no timing: line from %s\n" % (PROG, cmd[0]))
                        sys.exit(1)
                    got[name] = float(m.group(1))
                    print("  %-6s %d thread(s) %-8s forward+backward %.3f s"
                          % (model, t, name, got[name]), flush=True)
                res.setdefault((model, t), []).append(got)
    print("\n%-7s %-7s %-6s %-24s %-24s %s" % ("model", "threads", "steps", "PyTorch s",
                                              "rb_train s", "rb_train / PyTorch"))
    for (model, t), rounds in res.items():
        py = [g["PyTorch"] for g in rounds]
        rb = [g["rb_train"] for g in rounds]
        ratio = [g["rb_train"] / g["PyTorch"] for g in rounds]
        print("%-7s %-7d %-6d %-24s %-24s %s" % (model, t, steps[model], spread(py), spread(rb),
                                                 spread(ratio)))
    print("(median (min-max) over %d interleaved rounds)" % a.rounds)


def accuracy(a, env):
    t = a.threads[0]
    for model in a.models:
        got = {"PyTorch": [], "rb_train": []}
        for seed in a.seeds:
            anchor, rb = commands(a, model, t, 0, seed)
            for name, cmd in (("PyTorch", anchor), ("rb_train", rb)):
                m = FINAL.search(run(cmd, env))
                if not m:
                    sys.stderr.write("%s: no final: line from %s\n" % (PROG, cmd[0]))
                    sys.exit(1)
                got[name].append(float(m.group(2)))
                print("%-6s seed %d %-8s one epoch: %s %s" % (model, seed, name, m.group(1),
                                                             m.group(2)), flush=True)
        what = "test accuracy %" if model == "lenet" else "validation perplexity"
        print("%-6s %s after one epoch, mean of %d seed(s): PyTorch %.2f, rb_train %.2f"
              % (model, what, len(a.seeds), statistics.mean(got["PyTorch"]),
                 statistics.mean(got["rb_train"])), flush=True)


def main():
    p = Parser(prog=PROG, description="rb_train against the PyTorch anchors, interleaved")
    p.add_argument("--rb-train", default="build/benchmarks/rb_train",
                   help="rb_train binary (default %(default)s)")
    p.add_argument("--models", type=model_list, default=["lenet", "wordlm"],
                   help="comma-separated: lenet, wordlm (default both)")
    p.add_argument("--threads", type=int_list, default=[1, 2],
                   help="thread counts, comma-separated (default 1,2)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--lenet-steps", type=int, default=400, help="(default 400)")
    p.add_argument("--wordlm-steps", type=int, default=200, help="(default 200)")
    p.add_argument("--epoch", action="store_true",
                   help="accuracy after one epoch instead of timing")
    p.add_argument("--seeds", type=int_list, default=[1], help="--epoch: seeds (default 1)")
    a = p.parse_args()
    if a.rounds < 1 or a.lenet_steps < 1 or a.wordlm_steps < 1:
        p.error("--rounds and the step counts must be >= 1")
    if not os.access(a.rb_train, os.X_OK):
        p.error("--rb-train: '%s' is not an executable (build rb_train first)" % a.rb_train)
    env = dict(os.environ)
    if os.geteuid() == 0:   # rb_train starts MPI (a singleton); Open MPI refuses root without these
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    if a.epoch:
        accuracy(a, env)
    else:
        timing(a, env)


if __name__ == "__main__":
    main()
