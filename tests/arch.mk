# tests/arch.mk: the architecture (docs/architecture.md): the
# include and call graphs of src/ and benchmarks/ have no circle and nothing
# includes or calls a room its room may not use (library < harness <
# programs; nn: the library only, used by rb_train alone).
TESTS += tests/include_graph.py
dist_check_SCRIPTS += tests/include_graph.py
# The harness exports only bench_ names (the library owns rb_): nm over
# libbench.a.
TESTS += tests/harness_symbols.sh
dist_check_SCRIPTS += tests/harness_symbols.sh

# The programs' option tables (benchmarks/harness/bench_cli.h): the parser
# and --help against each table, in-process (test_cli), and each program's
# --help against its table and the options it had before (cli_help.sh).
check_PROGRAMS += tests/test_cli
tests_test_cli_SOURCES = tests/test_cli.c benchmarks/micro/micro_options.c \
	benchmarks/train/train_options.c benchmarks/sketch/sketch_options.c \
	benchmarks/gpubench/gpubench_options.c
tests_test_cli_CPPFLAGS = $(AM_CPPFLAGS) $(HDF5_CFLAGS)
tests_test_cli_LDADD = $(BENCH_LIBS)
TESTS += tests/test_cli tests/cli_help.sh
dist_check_SCRIPTS += tests/cli_help.sh

# The neural-network library exports only nn_ names and needs nothing of
# rb_train or the harness (read by nm from libnn.a).
TESTS += tests/nn_exports.sh
dist_check_SCRIPTS += tests/nn_exports.sh
