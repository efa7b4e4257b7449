# Benchmarks: one harness library shared by rb_micro and rb_train.
noinst_LIBRARIES += benchmarks/libbench.a
benchmarks_libbench_a_CPPFLAGS = $(AM_CPPFLAGS) $(HDF5_CFLAGS) $(PAPI_CFLAGS) $(HWLOC_CFLAGS) $(CUDA_CFLAGS)
benchmarks_libbench_a_SOURCES =
# Link line of every benchmark.
BENCH_LIBS = benchmarks/libbench.a $(LIBREDUCER) $(HDF5_LIBS) $(PAPI_LIBS) $(HWLOC_LIBS)

include benchmarks/micro.mk
include benchmarks/archive.mk
include benchmarks/train.mk
include benchmarks/sketch.mk
include benchmarks/sim.mk
benchmarks_libbench_a_SOURCES += benchmarks/gradgen.h benchmarks/gradgen.c benchmarks/micro_row.h
