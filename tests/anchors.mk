# tests/anchors.mk: the dense reference against OSU Micro-Benchmarks
# (benchmarks/anchors/osu-vs-dense); what the timed call holds is
# tests/lib/timed_region.sh (tests/lib.mk).
check_PROGRAMS += tests/anchors/osu_format_allreduce
TESTS += tests/anchors/osu_vs_dense.sh tests/anchors/osu_vs_dense_real.sh
dist_check_SCRIPTS += tests/anchors/osu_vs_dense.sh tests/anchors/osu_vs_dense_real.sh
tests_anchors_osu_format_allreduce_SOURCES = tests/anchors/osu_format_allreduce.c
EXTRA_DIST += benchmarks/anchors/osu-vs-dense
