"""rb-torch-train's modules: options (cli), data (data), models (models),
the training loop (loop) and the /train group of the archive (archive)."""
PROG = "rb-torch-train"


class UsageError(Exception):
    """A problem the user can fix (bad option, missing data): one line, exit 2."""
