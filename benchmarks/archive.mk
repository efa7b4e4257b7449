# benchmarks/archive.mk
