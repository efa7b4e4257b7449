# Benchmarks: the harness every program shares (benchmarks/harness, one
# library) and the programs on top of it, one folder each
# (docs/architecture.md).
noinst_LIBRARIES += benchmarks/libbench.a
benchmarks_libbench_a_CPPFLAGS = $(AM_CPPFLAGS) $(HDF5_CFLAGS) $(PAPI_CFLAGS) $(HWLOC_CFLAGS) $(CUDA_CFLAGS)
benchmarks_libbench_a_SOURCES =
# Link line of every benchmark.
BENCH_LIBS = benchmarks/libbench.a $(LIBREDUCER) $(HDF5_LIBS) $(PAPI_LIBS) $(HWLOC_LIBS)

include benchmarks/harness.mk
include benchmarks/micro.mk
include benchmarks/nn.mk
include benchmarks/train.mk
include benchmarks/sketch.mk
include benchmarks/torch.mk
