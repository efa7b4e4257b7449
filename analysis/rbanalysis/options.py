"""The reducer options of a row, as the archive records them: the typed
opt_<key> attributes the writer put where the row's options apply (its
samples dataset, /micro/results), each reducer's own options as the C side
described them (nothing here lists which reducer takes which option); the
text and the variant label the report names a row by."""

from .runmeta import _attrs_named


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


def options_text(opts):
    """key=value,... of the options (the writer recorded only those that
    apply to the row's reducer)."""
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
