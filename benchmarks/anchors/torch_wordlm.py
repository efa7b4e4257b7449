#!/usr/bin/python3
"""rb_train's wordlm in PyTorch: the anchor for its speed and perplexity.

Same model (embeddings of the previous --context words, a --hidden ReLU
layer, a softmax over the vocabulary; Bengio et al. 2003 without direct
connections), same corpus (the Debian fortune files tokenised as rb_train's
data_text.c does, or a directory of WikiText-style .tokens files), same
vocabulary, samples, initial parameters (rb_train's splitmix64 draws),
sample order, batch, momentum SGD (no weight decay on the embeddings) and
learning-rate schedule.  Prints forward+backward seconds in rb_train's
`timing:` form and validation perplexity in its `final:` form.

    benchmarks/anchors/torch_wordlm.py --threads 1 --iterations 400 --no-eval
    build/benchmarks/rb_train --model wordlm --threads 1 --iterations 400 -o none
"""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_common as tc  # noqa: E402

PROG = "torch_wordlm.py"
UNK, EOS = 0, 1
TRAIN, VALID, TEST = 0, 1, 2
# A fortune entry's tokens (C locale): runs of ASCII letters, digits and
# apostrophes (lower-cased, at most 256 bytes kept), or one of . , ; : ! ?
TOKEN = re.compile(rb"[A-Za-z0-9']+|[.,;:!?]")
WORD_MAX = 256


def fortune_files(d):
    """Regular files (not links, not .dat indexes, not dot files) by name."""
    try:
        names = os.listdir(d)
    except OSError as e:
        raise SystemExit("%s: %s: cannot open directory: %s" % (PROG, d, e.strerror))
    paths = []
    for n in names:
        if n.startswith(".") or (len(n) > 4 and n.endswith(".dat")):
            continue
        p = os.path.join(d, n)
        if os.path.isfile(p) and not os.path.islink(p):
            paths.append(p)
    if not paths:
        raise SystemExit("%s: %s: no fortune files (regular text files) found" % (PROG, d))
    return sorted(paths, key=os.fsencode)


def fortune_entries(path):
    """Entries of one file: the text between lines holding only '%'."""
    with open(path, "rb") as f:
        buf = f.read()
    start = i = 0
    n = len(buf)
    while i < n:
        eol = buf.find(b"\n", i)
        eol = n if eol < 0 else eol
        if eol - i == 1 and buf[i:i + 1] == b"%":
            if i > start:
                yield buf[start:i]
            start = eol + 1
        i = eol + 1
    if start < n:
        yield buf[start:]


def entry_tokens(text):
    out = []
    for m in TOKEN.finditer(text):
        w = m.group()[:WORD_MAX].lower().strip(b"'")
        if w:
            out.append(w)
    return out


def fortune_splits(d):
    """Token lists of train/valid/test: entry e goes to valid when e % 20
    == 18, to test when 19, else to train; <eos> after each entry."""
    splits = ([], [], [])
    e = 0
    for path in fortune_files(d):
        for text in fortune_entries(path):
            s = VALID if e % 20 == 18 else TEST if e % 20 == 19 else TRAIN
            toks = entry_tokens(text)
            if toks:
                splits[s].extend(toks)
                splits[s].append(None)   # <eos>
            e += 1
    return splits


def token_splits(d):
    """train/valid/test .tokens (or wiki.*.tokens, *.txt): whitespace
    separated, <eos> after each non-empty line."""
    splits = []
    for name in ("train", "valid", "test"):
        for pat in ("%s.tokens", "wiki.%s.tokens", "%s.txt"):
            p = os.path.join(d, pat % name)
            if os.access(p, os.R_OK):
                break
        else:
            raise SystemExit("%s: %s: missing %s.tokens" % (PROG, d, name))
        toks = []
        with open(p, "rb") as f:
            for line in f.read().split(b"\n"):
                words = line.split()
                if words:
                    toks.extend(words)
                    toks.append(None)
        splits.append(toks)
    return splits


def vocabulary(train, max_vocab):
    """The max_vocab - 2 most frequent training words (ties in byte order)
    after <unk> and <eos>; 0 = all."""
    counts = {}
    for w in train:
        if w is not None:
            counts[w] = counts.get(w, 0) + 1
    order = sorted(counts, key=lambda w: (-counts[w], w))
    if max_vocab > 2:
        order = order[:max_vocab - 2]
    return {w: i + 2 for i, w in enumerate(order)}, len(counts)


def ids_of(tokens, vocab):
    return np.array([EOS if w is None else vocab.get(w, UNK) for w in tokens], dtype=np.int64)


def samples(ids, ctx, limit):
    """(previous ctx ids, next id) at every position; <eos> before the start."""
    n = tc.limited(len(ids), limit)
    padded = np.concatenate([np.full(ctx, EOS, dtype=np.int64), ids[:n]])
    x = np.stack([padded[j:j + n] for j in range(ctx)], axis=1)
    return np.ascontiguousarray(x), ids[:n].copy()


def build(torch, vocab, ctx, dim, hidden, seed):
    nn = torch.nn

    class WordLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.hidden = nn.Linear(ctx * dim, hidden)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, x):
            e = self.embed(x).view(x.shape[0], -1)
            return self.out(torch.relu(self.hidden(e)))

    net = WordLM()
    rng = tc.param_rng(seed)   # rb_train's order: embedding, hidden, output
    emb = tc.init_weights(rng, vocab * dim, 0.1).reshape(vocab, dim)
    w1 = tc.init_weights(rng, hidden * ctx * dim, (6.0 / (ctx * dim)) ** 0.5)
    w2 = tc.init_weights(rng, vocab * hidden, (6.0 / hidden) ** 0.5)
    with torch.no_grad():
        net.embed.weight.copy_(torch.from_numpy(emb))
        net.hidden.weight.copy_(torch.from_numpy(w1.reshape(hidden, ctx * dim)))
        net.out.weight.copy_(torch.from_numpy(w2.reshape(vocab, hidden)))
        net.hidden.bias.zero_()
        net.out.bias.zero_()
    return net


def main():
    # The 64 x 256 x 10,000 output layer wants OpenBLAS's threads; beside
    # them OpenMP's must wait passively: --threads 2 took 0.64-0.66 s per
    # 80 steps so, 1.8-2.0 s with active waiting, 0.92-0.96 s with one
    # OpenBLAS thread
    p = tc.parser(PROG, "rb_train's wordlm in PyTorch (forward+backward time, perplexity)",
                  "/usr/share/games/fortunes", 0.1, 0, "passive")
    p.add_argument("--vocab", type=int, default=10000,
                   help="vocabulary incl. <unk>, <eos> (default 10000; 0 = all)")
    p.add_argument("--context", type=tc.positive, default=3, help="(default 3)")
    p.add_argument("--embed-dim", type=tc.positive, default=64, help="(default 64)")
    p.add_argument("--hidden", type=tc.positive, default=256, help="(default 256)")
    a = p.parse_args()
    if a.vocab < 0 or a.vocab in (1, 2):
        p.error("--vocab: %d leaves no room for words besides <unk> and <eos>" % a.vocab)
    torch = tc.import_torch(PROG, a)
    tokens = os.path.exists(os.path.join(a.data, "train.tokens")) or \
        os.path.exists(os.path.join(a.data, "wiki.train.tokens"))
    splits = token_splits(a.data) if tokens else fortune_splits(a.data)
    if not any(w is not None for w in splits[TRAIN]):
        raise SystemExit("%s: %s: the training split holds no words" % (PROG, a.data))
    vocab, distinct = vocabulary(splits[TRAIN], a.vocab)
    nv = len(vocab) + 2
    xtr, ytr = samples(ids_of(splits[TRAIN], vocab), a.context, a.train_limit)
    xva, yva = samples(ids_of(splits[VALID], vocab), a.context, a.test_limit)
    train_x, train_y = torch.from_numpy(xtr), torch.from_numpy(ytr)
    valid_x, valid_y = torch.from_numpy(xva), torch.from_numpy(yva)
    net = build(torch, nv, a.context, a.embed_dim, a.hidden, a.seed)

    def batch(idx):
        return train_x[idx], train_y[idx]

    xent = torch.nn.functional.cross_entropy

    def evaluate():
        loss = 0.0
        for at in range(0, len(valid_y), a.batch):
            z = net(valid_x[at:at + a.batch])
            loss += xent(z, valid_y[at:at + a.batch], reduction="sum").item()
        mean = loss / max(len(valid_y), 1)
        return "val_loss %.6f val_perplexity %.6f" % (mean, np.exp(mean))

    groups = [{"params": [net.embed.weight], "weight_decay": 0.0},
              {"params": [q for n, q in net.named_parameters() if not n.startswith("embed")],
               "weight_decay": a.weight_decay}]
    what = ("model wordlm (%d dense + %d embedding parameters), corpus %s: %d distinct training "
            "words, vocabulary %d, tokens train %d valid %d"
            % (sum(q.numel() for q in net.parameters()) - net.embed.weight.numel(),
               net.embed.weight.numel(), a.data, distinct, nv, len(ytr), len(yva)))
    tc.train(torch, a, net, groups, len(train_y), batch, xent, evaluate,
             {"prog": PROG, "what": what})


if __name__ == "__main__":
    main()
