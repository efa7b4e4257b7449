# rb_micro: the microbenchmark (benchmarks/micro; micro.h maps the files).
bin_PROGRAMS += benchmarks/rb_micro
benchmarks_rb_micro_SOURCES = benchmarks/micro/micro.h benchmarks/micro/micro_options.c \
	benchmarks/micro/micro_input.c benchmarks/micro/micro_measure.c \
	benchmarks/micro/micro_stats.c benchmarks/micro/micro_check.c benchmarks/micro/micro_model.c \
	benchmarks/micro/micro_memory.c \
	benchmarks/micro/micro_output.c benchmarks/micro/rb_micro.c \
	benchmarks/micro/micro_row.h benchmarks/micro/micro_row.c \
	benchmarks/micro/micro_archive.h benchmarks/micro/micro_archive.c \
	benchmarks/micro/micro_jsonl.h benchmarks/micro/micro_jsonl.c
benchmarks_rb_micro_CPPFLAGS = $(AM_CPPFLAGS) $(HDF5_CFLAGS)
benchmarks_rb_micro_LDADD = $(BENCH_LIBS)
