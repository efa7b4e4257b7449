# Results archive (HDF5), PAPI, hwloc: issue 5.
benchmarks_libbench_a_SOURCES += benchmarks/archive.h benchmarks/archive.c
