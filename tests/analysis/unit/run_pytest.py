"""Run one module-level test file of tests/analysis/unit/ under pytest, as
make check runs a test: exit 0 when every test passes, 1 when one fails,
77 (SKIP, with the reason) when Debian's python3-pytest or the analysis'
own packages are missing.  Each test_*.py calls main(__file__) when run
as a script, before importing anything pytest or the analysis needs."""

import importlib
import os
import sys

NEEDS = (("pytest", "python3-pytest"), ("numpy", "python3-numpy"), ("pandas", "python3-pandas"),
         ("h5py", "python3-h5py"))


def main(path):
    for module, package in NEEDS:
        try:
            importlib.import_module(module)
        except ImportError as e:
            print("SKIP: %s cannot import %s (%s): apt-get install %s (tests/install-deps.sh "
                  "installs it)" % (sys.executable, module, e, package))
            return 77
    import pytest
    # No __pycache__ in the source tree (make distcheck
    # runs from a read-only one).
    sys.dont_write_bytecode = True
    here = os.path.dirname(os.path.abspath(path))
    # No .pytest_cache or .hypothesis folder either.
    rc = pytest.main(["-v", "-rfEs", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                      "--rootdir", here, os.path.abspath(path)])
    # Anything but "all passed" fails: failures (1), an interrupted or
    # broken run (2-4), and a file where pytest collected no test (5).
    return 0 if rc == 0 else 1
