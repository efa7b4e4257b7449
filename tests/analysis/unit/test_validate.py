#!/usr/bin/python3
"""analysis/rbanalysis/validate.py, the archive rules rb-report and
rb-archive share, rule by rule: the root attributes (schema version,
complete, tool, stopped early, ranks), the values of /micro/results, the
final figures of /train, the status word of a listing, the runs a fault
interrupted (their note, their kept name), the content digest that
tells copies of one run apart, and the fast readers the report uses
(read_attribute, read_table: what h5py reads) and the first read of
every file in a forked child (first_reads).  Small HDF5 files are made in
memory (h5py's core driver); the real writers' files are checked by
tests/archive/ and tests/analysis/report.sh."""

import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from run_pytest import main
    sys.exit(main(__file__))

import faulthandler
import itertools
import signal

import h5py
import numpy as np
import pytest

from rbanalysis import screen, validate, runmeta

GOOD = {"schema_version": "1.0", "complete": 1, "tool": "rb_micro", "ranks": 2}
_files = itertools.count()


def attrs(**changes):
    a = dict(GOOD, **changes)
    return {k: v for k, v in a.items() if v is not None}


def invalid(fn, *args):
    """The reason fn(*args) gives for refusing the run."""
    with pytest.raises(validate.Invalid) as e:
        fn(*args)
    return str(e.value)


# ------------------------------------------------------ root attributes

def test_good_attributes_give_the_tool():
    assert validate.check_attrs(attrs()) == "rb_micro"
    assert validate.check_attrs(attrs(tool="rb_train", schema_version=1)) == "rb_train"
    assert validate.check_attrs(attrs(complete=np.int32(1), ranks=np.int64(1))) == "rb_micro"
    assert validate.check_attrs(attrs(complete=1.0, ranks="4")) == "rb_micro"


@pytest.mark.parametrize("changes, reason", [
    ({"schema_version": None}, "no schema_version attribute"),
    ({"schema_version": "v1"}, "is not a version number"),
    ({"schema_version": "2.0"}, "unknown schema version 2.0"),
    ({"complete": None}, "marked incomplete (complete=absent)"),
    ({"complete": 0}, "marked incomplete (complete=0)"),
    ({"complete": "yes"}, "not an integer"),
    ({"complete": 0.5}, "not an integer"),
    ({"tool": "rb_other"}, "unknown tool 'rb_other'"),
    ({"tool": None}, "unknown tool ''"),
    ({"timed_out": 1}, "stopped by its time limit"),
    ({"diverged": 1}, "diverged"),
    ({"ranks": 0}, "ranks = 0"),
    ({"ranks": "many"}, "ranks = many"),
])
def test_refused_attributes_say_why(changes, reason):
    assert reason in invalid(validate.check_attrs, attrs(**changes))


@pytest.mark.parametrize("name", ["malloc_policy", "hostname", "start_time", "machine_cores"])
def test_root_attribute_with_several_values_is_refused(name):
    """rb-report stopped with a traceback ('list' has no 'split')."""
    reason = invalid(validate.check_attrs, attrs(**{name: np.array([1, 2, 3])}))
    assert reason == "root attribute %s holds 3 values, not one: not written by reducerbench" % name


def test_trace_steps_may_hold_several_values():
    assert validate.check_attrs(attrs(trace_steps=np.array([1, 2, 3]))) == "rb_micro"


def test_flags_that_are_zero_do_not_refuse():
    assert validate.check_attrs(attrs(timed_out=0, diverged=0)) == "rb_micro"


def test_schema_major():
    assert [validate.schema_major(v) for v in ("1", 1, "1.2", b"3.0", "x", None)] == \
        [1, 1, 1, 3, None, None]


# ------------------------------------------------------- /micro/results

MICRO = [("reducer", "S16"), ("size_bytes", "<u8"), ("ranks", "<i4"), ("iters", "<i4"),
         ("t_avg_us", "<f8"), ("t_min_us", "<f8"), ("t_model_us", "<f8"), ("wrong", "<i8"),
         ("nnz_union", "<f8"), ("density", "<f8"), ("recall", "<f8"), ("checked", "<i4"),
         # the other columns every rb_micro archive has (validate.MICRO_REQUIRED)
         ("layout", "S16"), ("overlap", "S16"), ("rows", "<u8"), ("cols", "<u8"),
         ("warmup", "<i4"), ("t_max_us", "<f8"), ("t_p50_us", "<f8"), ("t_p99_us", "<f8"),
         ("bytes_sent_avg", "<f8"), ("bytes_sent_max", "<f8"), ("bytes_recv_avg", "<f8"),
         ("bytes_recv_max", "<f8")]
GOOD_ROW = (b"dense", 4096, 2, 100, 12.5, 10.0, np.nan, 0, -1.0, 0.01, np.nan, 1,
            b"element", b"random", 1, 1024, 10, 15.0, 12.0, 14.0, 4096.0, 4096.0, 4096.0, 4096.0)


def micro_rows(**second):
    """Two rows: a good one and one with the given values."""
    arr = np.array([GOOD_ROW, GOOD_ROW], dtype=MICRO)
    arr[1]["reducer"] = b"s2"
    for col, v in second.items():
        arr[1][col] = v
    return arr


def test_good_rows_pass():
    validate.check_micro_values(micro_rows())
    validate.check_micro_values(micro_rows(recall=1.0, nnz_union=10, t_model_us=0.0))


@pytest.mark.parametrize("col, value, why", [
    ("t_avg_us", -1.0, "times are finite and >= 0"),
    ("t_avg_us", np.nan, "times are finite and >= 0"),
    ("t_min_us", np.inf, "times are finite and >= 0"),
    ("t_model_us", -3.0, "or NaN when unknown"),
    ("ranks", 0, "at least 1 rank"),
    ("iters", 0, "= 0 is a value no run can have"),
    ("wrong", -1, "counts are finite and >= 0"),
    ("nnz_union", -2.0, "counts are finite and >= 0"),
    ("density", 1.5, "a fraction: 0..1"),
    ("density", np.nan, "a fraction: 0..1"),
    ("recall", 1.01, "a fraction: 0..1"),
    ("checked", 2, "(0 or 1)"),
])
def test_impossible_values_are_refused_naming_the_row(col, value, why):
    reason = invalid(validate.check_micro_values, micro_rows(**{col: value}))
    assert reason.startswith("/micro/results row 1 (s2, 4096 bytes): %s = " % col)
    assert why in reason


# ------------------------------------------------------------- /train

class Group:
    """What check_train reads of /train: its attributes."""
    def __init__(self, **a):
        self.attrs = a


@pytest.mark.parametrize("a, reason", [
    ({"final_train_loss": float("inf")}, "diverged: the final training loss is inf"),
    ({"final_train_loss": float("nan")}, "diverged"),
    ({"final_test_accuracy": 101.0}, "an accuracy is 0..100%"),
    ({"final_test_accuracy": -0.5}, "an accuracy is 0..100%"),
    ({"final_val_perplexity": 0.9}, "a perplexity is finite and >= 1"),
    ({"final_val_perplexity": float("inf")}, "a perplexity is finite and >= 1"),
    ({"final_test_accuracy": float("nan"), "final_val_perplexity": float("nan")},
     "neither a test accuracy nor a validation perplexity"),
    ({"timed_out": 1}, "timed_out=1 in /train"),
])
def test_train_refusals(a, reason):
    assert reason in invalid(validate.check_train, Group(**a))


def test_train_image_and_language_models_pass():
    validate.check_train(Group(final_train_loss=0.3, final_test_accuracy=88.0,
                               final_val_perplexity=float("nan")))
    validate.check_train(Group(final_train_loss=4.1, final_test_accuracy=float("nan"),
                               final_val_perplexity=120.0))


# ----------------------------------------------- whole runs, in HDF5 files

def h5(root=None, rows=None, train=None):
    """An in-memory HDF5 file: root attributes, /micro/results rows, or a
    /train group with these attributes."""
    f = h5py.File("validate-%d.h5" % next(_files), "w", driver="core", backing_store=False)
    for k, v in (attrs() if root is None else root).items():
        f.attrs[k] = v
    if rows is not None:
        f.create_group("micro").create_dataset("results", data=rows)
    if train is not None:
        g = f.create_group("train")
        for k, v in train.items():
            g.attrs[k] = v
    return f


@pytest.mark.parametrize("root, rows, train, word", [
    (None, "good", None, "complete"),
    (attrs(timed_out=1), "good", None, "TIMED-OUT"),
    (attrs(diverged=1), "good", None, "DIVERGED"),
    (attrs(complete=0), "good", None, "INCOMPLETE"),
    (None, "bad", None, "INVALID"),
    (None, None, None, "INVALID"),                     # rb_micro without /micro
    (attrs(tool="rb_train"), None, {"final_train_loss": 0.2}, "complete"),
    (attrs(tool="rb_train"), None, {"final_train_loss": float("inf")}, "DIVERGED"),
    (attrs(tool="rb_train"), "good", None, "INVALID"),  # rb_train without /train
])
def test_status_words(root, rows, train, word):
    arr = {"good": micro_rows(), "bad": micro_rows(t_avg_us=-1.0), None: None}[rows]
    with h5(root, arr, train) as f:
        got, reason = validate.status(f)
    assert got == word
    assert (reason == "") == (word == "complete")


def test_micro_results_must_be_a_compound_table_with_the_columns():
    with h5() as f:
        f.create_group("micro").create_group("results")
        assert "is not a table" in invalid(validate.check_run, f)
    with h5() as f:
        f.create_group("micro").create_dataset("results", data=np.zeros(3))
        assert "not a compound table" in invalid(validate.check_run, f)
    with h5() as f:
        f.create_group("micro").create_dataset(
            "results", data=np.zeros(1, dtype=[("reducer", "S8"), ("ranks", "<i4")]))
        why = invalid(validate.check_run, f)
        assert "lacks the column(s) layout, overlap, size_bytes" in why and "t_avg_us" in why


def test_micro_results_with_no_row_is_refused():
    with h5(rows=micro_rows()[:0]) as f:
        assert "/micro/results holds no rows" in invalid(validate.check_run, f)
        assert validate.status(f)[0] == "INVALID"


@pytest.mark.parametrize("col, kind", [("ranks", "S8"), ("t_avg_us", "S8"), ("density", "O")])
def test_micro_column_of_text_is_named(col, kind):
    """A column of text where a number belongs: named, not a TypeError from
    comparing text with a number."""
    dtype = [(n, (kind if n == col else t)) for n, t in MICRO]
    if kind == "O":
        dtype = [(n, (h5py.string_dtype() if n == col else t)) for n, t in MICRO]
    rows = np.zeros(2, dtype=dtype)
    for n, _ in MICRO:
        rows[n] = b"two" if n == col else np.array([GOOD_ROW], dtype=MICRO)[n][0]
    with h5(rows=rows) as f:
        reason = invalid(validate.check_run, f)
    assert reason.startswith("/micro/results column %s is of type " % col), reason
    assert "not a number" in reason


@pytest.mark.parametrize("sample, reason", [
    (np.array([[1.0, 2.0], [-5.0, 2.0]]), "/micro/samples/0: a per-call time = -5.0 is a value no run"),
    (np.array([[1.0, np.nan]]), "a per-call time = nan"),
    (np.array([[b"a", b"b"]]), "/micro/samples/0 is of type |S1, not per-call times"),
])
def test_micro_samples_a_run_cannot_have_are_refused(sample, reason):
    """The report's per-iteration quartiles came silently from negative or
    NaN samples; text was 'unreadable data (ValueError)'."""
    with h5(rows=micro_rows()) as f:
        f["micro"].create_group("samples").create_dataset("0", data=sample)
        assert reason in invalid(validate.check_run, f)
    with h5(rows=micro_rows()) as f:
        # per-call times around row 0's t_avg_us (12.5)
        f["micro"].create_group("samples").create_dataset("0", data=np.array([[10.0, 15.0]] * 3))
        assert validate.status(f) == ("complete", "")
    with h5(rows=micro_rows()) as f:
        f["micro"].create_group("samples").create_dataset("0", data=np.ones((3, 2)))
        assert "row 0: t_avg_us = 12.5 lies outside its samples" in invalid(validate.check_run, f)


CURVE = [("iteration", "<i8"), ("epoch", "<f8"), ("wall_s", "<f8"), ("train_loss", "<f8"),
         ("test_accuracy", "<f8"), ("val_perplexity", "<f8")]


def train_run(curve=None, **train_attrs):
    """An rb_train run whose /train holds curve (None: a good one of two
    evaluations; False: no curve at all) and these attributes."""
    f = h5(attrs(tool="rb_train"), train=dict({"final_train_loss": 0.5, "ranks": 2}, **train_attrs))
    if curve is None:
        curve = np.array([(5, 0.5, 0.1, 0.9, 60.0, np.nan), (10, 1.0, 0.2, 0.5, 70.0, np.nan)],
                         dtype=CURVE)
    if curve is not False:
        f["train"].create_dataset("curves", data=curve)
    return f


def curve_with(col, value, row=1):
    c = np.array([(5, 0.5, 0.1, 0.9, 60.0, np.nan), (10, 1.0, 0.2, 0.5, 70.0, np.nan)], dtype=CURVE)
    c[row][col] = value
    return c


def test_train_run_with_a_good_curve_passes():
    with train_run() as f:
        assert validate.status(f) == ("complete", "")


@pytest.mark.parametrize("curve, reason", [
    (np.zeros(0, dtype=CURVE), "/train/curves holds no rows"),
    (curve_with("test_accuracy", -40.0), "row 1: test_accuracy = -40.0 is a value no run can have"),
    (curve_with("test_accuracy", 140.0), "an accuracy: 0..100"),
    (curve_with("wall_s", -5.0), "row 1: wall_s = -5.0"),
    (curve_with("wall_s", np.inf), "wall_s = inf"),
    (curve_with("train_loss", -3.0), "a loss: >= 0"),
    (curve_with("val_perplexity", 0.5), "a perplexity: finite and >= 1"),
    (curve_with("iteration", 1), "the iterations go back"),
])
def test_train_curves_a_run_cannot_have_are_refused(curve, reason):
    with train_run(curve) as f:
        assert reason in invalid(validate.check_run, f)
        assert validate.status(f)[0] == "INVALID"


def test_train_text_where_a_number_is_read_is_named():
    """rb-report stopped with an internal error (int('many'), a text
    column compared with numbers); now the run is refused, named."""
    with train_run(ranks="many") as f:
        assert "/train attribute ranks = many is not a whole number >= 1" in invalid(validate.check_run, f)
    with train_run(target_accuracy="high") as f:
        assert "target_accuracy = high is not a number" in invalid(validate.check_run, f)
    text_col = np.zeros(2, dtype=[(n, "S8" if n == "test_accuracy" else t) for n, t in CURVE])
    with train_run(text_col) as f:
        assert "/train/curves column test_accuracy is of type" in invalid(validate.check_run, f)


def test_content_digest_tells_copies_apart():
    with h5(rows=micro_rows()) as a, h5(rows=micro_rows()) as b, \
            h5(rows=micro_rows(t_avg_us=12.6)) as c, h5(attrs(ranks=3), micro_rows()) as d:
        b.attrs["source_file"] = "elsewhere/run.h5"   # where a copy came from: not content
        assert validate.content_digest(a) == validate.content_digest(b)
        assert validate.content_digest(a) != validate.content_digest(c)   # one value
        assert validate.content_digest(a) != validate.content_digest(d)   # one attribute


def test_lists_copied_from_load_stay_in_step():
    # Both take the root attributes from the archive schema: what the
    # report reads as one value (runmeta.py), validate.py checks to be one
    # (a name the schema types as an array, or lacks, would be read
    # unchecked).
    from rbanalysis import load
    read_as_one = set(runmeta.META_ATTRS.values()) | set(runmeta.MACHINE_LOAD)
    missing = read_as_one - set(validate.SCALAR_ROOT_ATTRS)
    assert not missing, "runmeta.py reads %s as one value; the schema must type them as scalars" % sorted(missing)
    assert set(validate.TRAIN_CURVE_MARKERS) == set(load.CURVE_MARKERS), \
        "validate.TRAIN_CURVE_MARKERS %s differs from load.CURVE_MARKERS %s" % (
            validate.TRAIN_CURVE_MARKERS, load.CURVE_MARKERS)


# ------------------------------------------------- runs a fault interrupted

def kept_file(path, note, complete=0):
    """A file as a fault keeps it: a 512-byte user block holding the note
    (none: NULs), complete = 0, rows."""
    with h5py.File(path, "w", userblock_size=512) as f:
        for k, v in attrs(complete=complete).items():
            f.attrs[k] = v
        f.create_group("micro").create_dataset("results", data=micro_rows())
    if note is not None:
        with open(path, "r+b") as w:
            w.write((validate.NOTE_PREFIX + note.encode() + b"\n").ljust(512, b"\0"))
    return path


def test_an_interrupted_run_gives_its_reason_and_rows(tmp_path):
    why = "no progress for 61 s inside dense at 4096 B (timed calls): a network or peer fault?"
    p = kept_file(str(tmp_path / "run.h5.interrupted"), why)
    assert validate.interruption(p) == why
    with h5py.File(p, "r") as f:
        word, reason = validate.status(f)
    assert word == "INTERRUPTED"
    assert reason.startswith("interrupted: " + why)
    assert "row(s) finished before it are kept" in reason


def test_the_kept_name_without_a_note_is_interrupted_too(tmp_path):
    p = kept_file(str(tmp_path / "run.h5.interrupted"), None)
    assert validate.interruption(p) is None
    with h5py.File(p, "r") as f:
        word, reason = validate.status(f)
    assert word == "INTERRUPTED" and "no reason recorded" in reason


def test_a_note_under_any_name_is_read(tmp_path):
    p = kept_file(str(tmp_path / "renamed.h5"), "signal SIGTERM (scancel)")
    with h5py.File(p, "r") as f:
        assert validate.status(f)[0] == "INTERRUPTED"


def test_a_finished_run_with_an_empty_user_block_passes(tmp_path):
    p = kept_file(str(tmp_path / "done.h5"), None, complete=1)
    assert validate.interruption(p) is None
    assert validate.is_kept_partial(p) is False
    assert validate.is_kept_partial(p + ".interrupted") and validate.is_kept_partial("x.h5.failed")
    with h5py.File(p, "r") as f:
        assert validate.status(f) == ("complete", "")


# ------------------------------------------- reading fast, reading the same

def same_value(a, b):
    """Equal values of equal types (arrays: equal dtype, shape and bytes,
    or equal elements where they hold objects)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        return a.tolist() == b.tolist() if a.dtype.hasobject else a.tobytes() == b.tobytes()
    if isinstance(a, h5py.Empty):
        return a.dtype == b.dtype
    return a == b or (a != a and b != b)   # NaN


def test_read_attribute_reads_what_h5py_reads(tmp_path):
    with h5py.File(str(tmp_path / "a.h5"), "w") as f:
        a = f.attrs
        a["int"], a["float"], a["nan"], a["i32"] = 3, 2.5, float("nan"), np.int32(-4)
        a["bool"], a["u64"], a["complex"] = True, np.uint64(2 ** 63 + 1), 1 + 2j
        a["text"], a["unicode"], a["bytes"] = "run", "σ=1", b"raw\xff"
        a["fixed"] = np.bytes_("fixed")
        a["ints"], a["grid"] = np.arange(5), np.ones((2, 3), dtype=">f4")
        a["texts"] = ["a", "bb", ""]
        a["fixed_texts"] = np.array([b"x", b"yy"], dtype="S4")
        a["empty"] = h5py.Empty("f8")
        a.create("triple", data=np.ones((2, 3)), dtype=np.dtype("(3,)f8"))
        a["record"] = np.array((1, 2.0, b"r"), dtype=[("i", "<i4"), ("x", "<f8"), ("s", "S3")])
        a["records"] = np.zeros(2, dtype=[("i", "<i4"), ("x", "<f8")])
        names = list(a)
        assert len(names) == 19
        for name in names:
            assert same_value(validate.read_attribute(f, name), a[name]), name
        with pytest.raises(KeyError):
            validate.read_attribute(f, "absent")


def text_table(path, strpad, rows):
    """A compound table (name: 8-byte text stored with strpad, x: double),
    its bytes written as they are: text after a NUL kept."""
    with h5py.File(path, "w") as f:
        st = h5py.h5t.C_S1.copy()
        st.set_size(8)
        st.set_strpad(strpad)
        ct = h5py.h5t.create(h5py.h5t.COMPOUND, 16)
        ct.insert(b"name", 0, st)
        ct.insert(b"x", 8, h5py.h5t.NATIVE_DOUBLE)
        raw = np.array(rows, dtype=[("name", "S8"), ("x", "<f8")])
        d = h5py.h5d.create(f.id, b"t", ct, h5py.h5s.create_simple((len(rows),)))
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, raw, mtype=ct)
    return path


@pytest.mark.parametrize("strpad", [h5py.h5t.STR_NULLTERM, h5py.h5t.STR_NULLPAD,
                                    h5py.h5t.STR_SPACEPAD])
def test_read_table_reads_what_h5py_reads(tmp_path, strpad):
    """rb_micro's text columns are NUL-terminated: h5py has HDF5 convert
    them, read_table copies them and cuts them at the first NUL (text
    after it, left there by a writer, must not come through)."""
    rows = [(b"ab\0zz", 1.0), (b"abcdefgh", 2.0), (b"", 3.0), (b"  pad  ", 4.0)]
    with h5py.File(text_table(str(tmp_path / "t.h5"), strpad, rows), "r") as f:
        want = f["t"][...]
        got = validate.read_table(f["t"])
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_read_table_of_other_tables_is_h5pys(tmp_path):
    with h5py.File(str(tmp_path / "o.h5"), "w") as f:
        f["big_endian"] = np.array([(1, 2.0)], dtype=[("i", ">i4"), ("x", ">f8")])
        f["plain"] = np.arange(6.0)
        f["scalar"] = np.array((1, 2.0), dtype=[("i", "<i4"), ("x", "<f8")])
        f["grid"] = np.zeros((2, 2), dtype=[("i", "<i4"), ("s", "S4")])
        f["none"] = np.zeros(0, dtype=[("i", "<i4"), ("s", "S4")])
        f["micro"] = micro_rows()
        for name in f:
            want, got = f[name][...], validate.read_table(f[name])
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), name


def micro_file(path, run_id, **second):
    with h5py.File(path, "w") as f:
        for k, v in attrs(run_id=run_id).items():
            f.attrs[k] = v
        f.create_group("micro").create_dataset("results", data=micro_rows(**second))
    return path


def test_first_reads_give_each_file_in_order_with_its_digests(tmp_path):
    a = micro_file(str(tmp_path / "a.h5"), "a")
    b = micro_file(str(tmp_path / "b.h5"), "b", t_avg_us=12.6)
    merged = str(tmp_path / "merged.h5")
    with h5py.File(merged, "w") as f:
        for name, src in (("one", a), ("two", b)):
            with h5py.File(src, "r") as s:
                s.copy(s, f.require_group("runs"), name)
    (tmp_path / "text.h5").write_bytes(b"not an archive")
    os.mkfifo(str(tmp_path / "fifo.h5"))
    paths = [a, str(tmp_path / "fifo.h5"), b, str(tmp_path / "text.h5"), merged,
             str(tmp_path / "gone.h5")]
    got = list(screen.first_reads(paths))
    assert [p for p, _, _ in got] == paths
    assert all(why is None for _, why, _ in got)
    digest = {}
    for p in (a, b, merged):
        with h5py.File(p, "r") as f:
            digest[p] = {name: validate.content_digest(g) for name, g in screen.run_groups(f)}
    assert [d for _, _, d in got] == [digest[a], None, digest[b], {}, digest[merged], None]
    assert set(digest[merged]) == {"one", "two"} and digest[merged]["one"] == digest[a][""]


def test_first_reads_name_the_file_whose_read_kills_the_reader(tmp_path, monkeypatch):
    """A file that crashes HDF5 kills the child reading it: named, and the
    files after it are read by a new child."""
    paths = [micro_file(str(tmp_path / ("%d.h5" % i)), str(i)) for i in range(3)]
    first_read = screen._first_read

    def crash_on_the_second(path):   # in the child
        if path == paths[1]:
            faulthandler.disable()   # pytest's: no traceback of the child on stderr
            os.kill(os.getpid(), signal.SIGSEGV)
        return first_read(path)

    monkeypatch.setattr(screen, "_first_read", crash_on_the_second)
    got = list(screen.first_reads(paths))
    assert [p for p, _, _ in got] == paths
    assert got[0][1] is None and got[2][1] is None and set(got[2][2]) == {""}
    assert "reading it killed the reader (signal SIGSEGV" in got[1][1] and got[1][2] is None
    assert screen.crashing_files(paths) == {paths[1]: got[1][1]}


def test_first_reads_stopped_early_leave_no_child(tmp_path):
    paths = [micro_file(str(tmp_path / ("%d.h5" % i)), str(i)) for i in range(20)]
    reads = screen.first_reads(paths)
    assert next(reads)[0] == paths[0]
    reads.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)
