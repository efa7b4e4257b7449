"""Data of rb-torch-train: Fashion-MNIST (IDX files, gzip or plain, read as
benchmarks/anchors/torch_lenet.py and rb_train's nn_idx_load read them) and
dict-gcide's text (the dictd dictionary tokenised as rb_train's embedlm
does: benchmarks/nn/data_text.c, nn_corpus_build_dictd).

Rank 0 builds the corpus and broadcasts it (tokenising 60 MB of text in
Python takes seconds; the other ranks would only compete for the cores).
"""
import gzip
import os
import re
import struct
import zlib

import numpy as np

from . import UsageError

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"
GCIDE = "/usr/share/dictd/gcide.dict.dz"
UNK, EOS = 0, 1
TRAIN, VALID, TEST = 0, 1, 2


# ----------------------------------------------------------------- images
def read_idx(path, magic, ndims):
    """The array of an IDX file (PATH.gz or PATH)."""
    for p in (path + ".gz", path):
        if os.access(p, os.R_OK):
            path = p
            break
    else:
        raise UsageError("%s[.gz]: missing or unreadable" % path)
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            raw = f.read()
    except (OSError, EOFError, zlib.error) as e:
        raise UsageError("%s: %s" % (path, e))
    hl = 4 * (1 + ndims)
    if len(raw) < hl or struct.unpack(">I", raw[:4])[0] != magic:
        raise UsageError("%s: not an IDX file with magic 0x%08x" % (path, magic))
    dims = struct.unpack(">%dI" % ndims, raw[4:hl])
    n = int(np.prod(dims))
    if len(raw) - hl < n:
        raise UsageError("%s: truncated" % path)
    return np.frombuffer(raw, dtype=np.uint8, count=n, offset=hl).reshape(dims)


def load_images(data, split, limit):
    """(uint8 images [n, h, w], int64 labels [n]) of the first `limit`
    samples (0 = all) of split "train" or "t10k"."""
    x = read_idx(os.path.join(data, "%s-images-idx3-ubyte" % split), 0x803, 3)
    y = read_idx(os.path.join(data, "%s-labels-idx1-ubyte" % split), 0x801, 1)
    n = min(len(x), len(y))
    n = min(n, limit) if limit else n
    if n == 0:
        raise UsageError("%s: the %s split is empty" % (data, split))
    return x[:n], y[:n].astype(np.int64)


# ------------------------------------------------------------------- text
_B64 = {c: i for i, c in enumerate(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}
_TOKEN = re.compile(rb"[a-z0-9']+|[.,;:!?]")
_FORMS = re.compile(rb"\\[^\\]*(\\|$)")          # \Ab*do"men\ (an odd one: to the end)
_BRACKET = re.compile(rb"\[[^\[\]]*\]")          # innermost [...]


def _b64(s):
    v = 0
    for ch in s:
        d = _B64.get(ch)
        if d is None:
            return -1
        v = v * 64 + d
    return v if s else -1


def _index_path(dict_path):
    for suffix in (".dict.dz", ".dict"):
        if dict_path.endswith(suffix) and len(dict_path) > len(suffix):
            return dict_path[:-len(suffix)] + ".index"
    raise UsageError("%s: not a dictd dictionary: expected NAME.dict or NAME.dict.dz "
                     "(with NAME.index beside it)" % dict_path)


def _entries(dict_path):
    """(data bytes, sorted distinct (offset, length) of the index, metadata
    headwords "00-..." left out)."""
    index = _index_path(dict_path)
    for p in (dict_path, index):
        if not os.path.isfile(p):
            raise UsageError("%s: missing or not a regular file" % p)
    try:
        if dict_path.endswith(".dz"):
            with gzip.open(dict_path, "rb") as f:
                data = f.read()
        else:
            with open(dict_path, "rb") as f:
                data = f.read()
        with open(index, "rb") as f:
            lines = f.read().split(b"\n")
    except (OSError, EOFError, zlib.error) as e:
        raise UsageError("%s: %s" % (dict_path, e))
    if b"\0" in data:
        raise UsageError("%s: a NUL byte: not text" % dict_path)
    seen = set()
    for ln, line in enumerate(lines):
        if not line:
            continue
        parts = line.rsplit(b"\t", 2)
        off = _b64(parts[1]) if len(parts) == 3 else -1
        ln_ = _b64(parts[2]) if len(parts) == 3 else -1
        if off < 0 or ln_ < 0:
            raise UsageError('%s: line %d: not "headword<TAB>offset<TAB>length" with base64 '
                             "numbers" % (index, ln + 1))
        if off + ln_ > len(data):
            raise UsageError("%s: line %d: entry at bytes %d..%d lies beyond the end of %s"
                             % (index, ln + 1, off, off + ln_, dict_path))
        if not parts[0].startswith(b"00-") and ln_ > 0:
            seen.add((off, ln_))
    if not seen:
        raise UsageError("%s: no dictionary entries" % index)
    return data, sorted(seen)


def _prose(text):
    """rb_train's dictd_prose: forms between backslashes and bracketed
    spans (nested too) removed; an unclosed [ removes the rest."""
    if b"\\" in text:
        text = _FORMS.sub(b" ", text)
    if b"[" in text:
        for _ in range(16):      # nesting depth; bounded
            t = _BRACKET.sub(b" ", text)
            if t == text:
                break
            text = t
        cut = text.find(b"[")
        if cut >= 0:
            text = text[:cut]
    return text


def build_corpus(dict_path, max_vocab, max_entries=0):
    """{"vocab": n, "train"/"valid"/"test": int64 ids}: entry i goes to
    valid when i % 20 == 18, test when 19, else train; <eos> (1) after each
    entry with words; the vocabulary is <unk> (0), <eos> (1) and the
    max_vocab - 2 most frequent training words (ties in byte order)."""
    data, entries = _entries(dict_path)
    if max_entries:
        entries = entries[:max_entries]
    splits = ([], [], [])
    for i, (off, ln) in enumerate(entries):
        toks = _TOKEN.findall(_prose(data[off:off + ln]).lower())
        toks = [w.strip(b"'") for w in toks]
        toks = [w for w in toks if w]
        if toks:
            s = VALID if i % 20 == 18 else TEST if i % 20 == 19 else TRAIN
            splits[s].extend(toks)
            splits[s].append(None)
    for s, name in ((TRAIN, "training"), (VALID, "validation"), (TEST, "test")):
        if not splits[s]:
            raise UsageError("%s: the %s split holds no words" % (dict_path, name))
    counts = {}
    for w in splits[TRAIN]:
        counts[w] = counts.get(w, 0) + 1
    counts.pop(None, None)
    order = sorted(counts, key=lambda w: (-counts[w], w))
    if max_vocab > 2:
        order = order[:max_vocab - 2]
    ids = {w: i + 2 for i, w in enumerate(order)}
    ids[None] = EOS
    out = {"vocab": len(order) + 2, "distinct": len(counts)}
    for s, name in ((TRAIN, "train"), (VALID, "valid"), (TEST, "test")):
        get = ids.get
        out[name] = np.fromiter((get(w, UNK) for w in splits[s]), dtype=np.int64,
                                count=len(splits[s]))
    return out


def text_windows(ids, context, limit):
    """Non-overlapping windows of context + 1 ids: inputs [n, context] and
    targets [n, context] (the next word at every position), the first
    `limit` windows (0 = all)."""
    n = (len(ids) - 1) // context
    n = min(n, limit) if limit else n
    if n == 0:
        return np.zeros((0, context), np.int64), np.zeros((0, context), np.int64)
    x = ids[:n * context].reshape(n, context)
    y = ids[1:n * context + 1].reshape(n, context)
    return np.ascontiguousarray(x), np.ascontiguousarray(y)
