# rb_micro: the microbenchmark, and the harness pieces every benchmark shares.
benchmarks_libbench_a_SOURCES += \
	benchmarks/bench_common.h benchmarks/bench_common.c \
	benchmarks/bench_device.h benchmarks/bench_device.c
bin_PROGRAMS += benchmarks/rb_micro
benchmarks_rb_micro_SOURCES = benchmarks/rb_micro.c
benchmarks_rb_micro_CPPFLAGS = $(AM_CPPFLAGS) $(HDF5_CFLAGS)
benchmarks_rb_micro_LDADD = $(BENCH_LIBS)
