"""The analysis package (analysis/rbanalysis) on the path, from the source
tree make check names (top_srcdir), else from this file's place in it."""

import os
import sys

TOP = os.environ.get("top_srcdir") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "..", "..", "..")
sys.path.insert(0, os.path.join(TOP, "analysis"))
