#!/usr/bin/python3
"""rb_train's lenet in PyTorch: the anchor for its speed and accuracy.

Same layers (conv5x5-6, max-pool 2, ReLU, conv5x5-16, max-pool 2, ReLU,
fc120, ReLU, fc84, ReLU, fc10 on 28x28 input padded by 2), same data (the
IDX files of Fashion-MNIST, pixels scaled to [-1, 1]), the same initial
parameters (rb_train's splitmix64 He-uniform draws, permuted into PyTorch's
layouts), the same sample order, batch, momentum SGD, weight decay and
learning-rate schedule.  Prints forward+backward seconds in rb_train's
`timing:` form and test accuracy in its `final:` form.

    benchmarks/anchors/torch_lenet.py --threads 1 --iterations 400 --no-eval
    build/benchmarks/rb_train --model lenet --threads 1 --iterations 400 -o none
"""
import gzip
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_common as tc  # noqa: E402

PROG = "torch_lenet.py"


def read_idx(path, magic, ndims):
    """The array of an IDX file (gzip or plain), as rb_train's nn_idx_load."""
    for p in (path + ".gz", path):
        if os.access(p, os.R_OK):
            path = p
            break
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            raw = f.read()
    except (OSError, EOFError) as e:
        raise SystemExit("%s: %s: %s" % (PROG, path, e))
    hl = 4 * (1 + ndims)
    if len(raw) < hl or struct.unpack(">I", raw[:4])[0] != magic:
        raise SystemExit("%s: %s: not an IDX file with magic 0x%08x" % (PROG, path, magic))
    dims = struct.unpack(">%dI" % ndims, raw[4:hl])
    n = int(np.prod(dims))
    if len(raw) - hl < n:
        raise SystemExit("%s: %s: truncated" % (PROG, path))
    return np.frombuffer(raw, dtype=np.uint8, count=n, offset=hl).reshape(dims)


def load(data, split, limit):
    x = read_idx(os.path.join(data, "%s-images-idx3-ubyte" % split), 0x803, 3)
    y = read_idx(os.path.join(data, "%s-labels-idx1-ubyte" % split), 0x801, 1)
    n = tc.limited(min(len(x), len(y)), limit)
    return x[:n], y[:n]


def build(torch, seed):
    nn = torch.nn
    net = nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.MaxPool2d(2), nn.ReLU(),
        nn.Conv2d(6, 16, 5), nn.MaxPool2d(2), nn.ReLU(), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
    rng = tc.param_rng(seed)
    # rb_train draws the weights layer by layer in its layouts: filters
    # KRSC (out, ky, kx, in), dense (out, in) with fc1's input in NHWC order.
    conv1 = tc.init_weights(rng, 6 * 25, (6.0 / 25) ** 0.5).reshape(6, 5, 5, 1)
    conv2 = tc.init_weights(rng, 16 * 150, (6.0 / 150) ** 0.5).reshape(16, 5, 5, 6)
    fc1 = tc.init_weights(rng, 120 * 400, (6.0 / 400) ** 0.5).reshape(120, 5, 5, 16)
    fc2 = tc.init_weights(rng, 84 * 120, (6.0 / 120) ** 0.5).reshape(84, 120)
    fc3 = tc.init_weights(rng, 10 * 84, (6.0 / 84) ** 0.5).reshape(10, 84)
    weights = [conv1.transpose(0, 3, 1, 2), conv2.transpose(0, 3, 1, 2),
               fc1.transpose(0, 3, 1, 2).reshape(120, 400), fc2, fc3]
    layers = [m for m in net if isinstance(m, (nn.Conv2d, nn.Linear))]
    with torch.no_grad():
        for m, w in zip(layers, weights):
            m.weight.copy_(torch.from_numpy(np.ascontiguousarray(w)))
            m.bias.zero_()
    return net


def main():
    # LeNet's dense layers are too small for OpenBLAS threads, which only
    # compete with OpenMP's: --threads 2 ran 2.9x slower with 2 than with 1
    # (0.38 s against 1.1-1.2 s per 150 steps); active waiting was faster
    # than passive (0.38 against 0.47 s)
    p = tc.parser(PROG, "rb_train's lenet in PyTorch (forward+backward time, test accuracy)",
                  "/usr/share/datasets/fashion-mnist", 0.1, 1, "active")
    p.add_argument("--memory-format", choices=("channels_last", "contiguous"),
                   default="channels_last",
                   help="activations NHWC as rb_train's (oneDNN's faster path here) or "
                        "PyTorch's default NCHW (default %(default)s)")
    a = p.parse_args()
    torch = tc.import_torch(PROG, a)
    xtr, ytr = load(a.data, "train", a.train_limit)
    xte, yte = load(a.data, "t10k", a.test_limit)
    h, w = xtr.shape[1:]
    if (h, w) != (28, 28):
        raise SystemExit("%s: %s: %dx%d images; this anchor has rb_train's 28x28 lenet"
                         % (PROG, a.data, h, w))
    train_x = torch.from_numpy(xtr.copy()).unsqueeze(1)
    train_y = torch.from_numpy(ytr.astype(np.int64))
    test_x = torch.from_numpy(xte.copy()).unsqueeze(1)
    test_y = torch.from_numpy(yte.astype(np.int64))
    net = build(torch, a.seed)
    fmt = torch.channels_last if a.memory_format == "channels_last" else torch.contiguous_format
    net = net.to(memory_format=fmt)

    def pixels(raw):   # bytes -> [-1, 1] as rb_train's make_batch
        return (raw.float() * (2.0 / 255.0) - 1.0).contiguous(memory_format=fmt)

    def batch(idx):
        return pixels(train_x[idx]), train_y[idx]

    xent = torch.nn.functional.cross_entropy

    def evaluate():
        loss = correct = 0.0
        for at in range(0, len(test_y), a.batch):
            z = net(pixels(test_x[at:at + a.batch]))
            yb = test_y[at:at + a.batch]
            loss += xent(z, yb, reduction="sum").item()
            correct += (z.argmax(1) == yb).sum().item()
        n = len(test_y)
        return "test_loss %.6f test_accuracy %.2f" % (loss / n, 100.0 * correct / n)

    groups = [{"params": list(net.parameters()), "weight_decay": a.weight_decay}]
    what = "model lenet (%d parameters, %s), data %s, %d train / %d test samples" % (
        sum(q.numel() for q in net.parameters()), a.memory_format, a.data, len(train_y),
        len(test_y))
    tc.train(torch, a, net, groups, len(train_y), batch, xent, evaluate,
             {"prog": PROG, "what": what})


if __name__ == "__main__":
    main()
