# benchmarks/micro.mk
