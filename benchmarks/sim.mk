# SimGrid SMPI support (issue 10): simulation metadata, shared buffers, compute model.
benchmarks_libbench_a_SOURCES += benchmarks/simmeta.h benchmarks/simmeta.c
