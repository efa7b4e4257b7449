# tests/harness.mk: what every program shares (benchmarks/harness).  The
# programs' option tables (bench_cli.h): the parser and --help against
# each table, in-process (test_cli), and each program's --help against its
# table and the options it had before (cli_help.sh).  Every failure names
# itself: the library's error codes walked through the programs.  Hostile
# but realistic use (bad data, full disks, racing writers, values no run
# can have, bad environment): a named failure or a correct run, never a
# crash, a hang, a lost result or an impossible value reported.  The
# machine's load recorded beside the measurement.
check_PROGRAMS += tests/harness/test_cli
tests_harness_test_cli_SOURCES = tests/harness/test_cli.c benchmarks/micro/micro_options.c \
	benchmarks/train/train_options.c benchmarks/sketch/sketch_options.c \
	benchmarks/gpubench/gpubench_options.c
tests_harness_test_cli_CPPFLAGS = $(AM_CPPFLAGS) $(HDF5_CFLAGS)
tests_harness_test_cli_LDADD = $(BENCH_LIBS)
# The hostile cases, one concern a script (hostile_lib.sh: what they share).
HOSTILE_TESTS = tests/harness/hostile_data.sh tests/harness/hostile_disk.sh \
	tests/harness/hostile_archives.sh tests/harness/hostile_micro.sh \
	tests/harness/hostile_env.sh tests/harness/hostile_analysis.sh
HARNESS_TESTS = tests/harness/cli_help.sh tests/harness/fail_named.sh $(HOSTILE_TESTS) \
	tests/harness/machine_load.sh
TESTS += tests/harness/test_cli $(HARNESS_TESTS)
dist_check_SCRIPTS += $(HARNESS_TESTS) tests/harness/hostile_lib.sh
