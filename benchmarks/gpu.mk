# rb_gpubench: kernel throughput against the device copy bandwidth, NCCL
# dense allreduce, bitmap merge methods (issue 9; built only with CUDA).
EXTRA_DIST += benchmarks/gpubench/rb_gpubench.c
benchmarks_rb_gpubench_SOURCES = benchmarks/gpubench/rb_gpubench.c
benchmarks_rb_gpubench_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS) $(NCCL_CFLAGS)
benchmarks_rb_gpubench_LDADD = $(LIBREDUCER)
if HAVE_CUDA
bin_PROGRAMS += benchmarks/rb_gpubench
endif
