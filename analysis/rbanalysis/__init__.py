"""rbanalysis: turn reducerbench HDF5 archives into tables, figures and a report.

Modules:
  validate  the archive rules (what a run may say), shared with rb-archive
  load      find files, open runs (single-run files and merged archives),
            refuse unusable ones, build tidy pandas tables
  stats     medians with 95% confidence intervals over repetitions, significance
  micro     microbenchmark tables: repetitions, speedups, ranks, wire bytes, scaling
  training  training tables: curves, time to target, phases, efficiency
  claims    the papers' headline claims measured on the user's data, per setting
  compare   rb-report --compare: contradictions between two data sets
  figures   PNG figures (matplotlib, Agg backend): one colour per reducer, the verdict
  formatting how numbers are written: sizes, percentages, intervals, exact values
  document  a small block model rendered to report.md and report.html
  cli       the rb-report command
"""

__version__ = "0.1.0"
