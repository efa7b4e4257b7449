# rb_micro: the microbenchmark (benchmarks/micro).
bin_PROGRAMS += benchmarks/rb_micro
benchmarks_rb_micro_SOURCES = benchmarks/micro/micro.h benchmarks/micro/micro_options.c \
	benchmarks/micro/rb_micro.c
benchmarks_rb_micro_CPPFLAGS = $(AM_CPPFLAGS) $(HDF5_CFLAGS)
benchmarks_rb_micro_LDADD = $(BENCH_LIBS)
