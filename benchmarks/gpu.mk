# rb_gpubench: kernel throughput against the device copy bandwidth, NCCL
# dense allreduce, bitmap merge methods (built only with CUDA).
GPUBENCH_FILES = benchmarks/gpubench/gpubench.h benchmarks/gpubench/gpubench_options.c \
	benchmarks/gpubench/rb_gpubench.c
EXTRA_DIST += $(GPUBENCH_FILES)
benchmarks_rb_gpubench_SOURCES = $(GPUBENCH_FILES)
benchmarks_rb_gpubench_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS) $(NCCL_CFLAGS)
benchmarks_rb_gpubench_LDADD = $(BENCH_LIBS)
if HAVE_CUDA
bin_PROGRAMS += benchmarks/rb_gpubench
endif
