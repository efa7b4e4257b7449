# benchmarks/train.mk
