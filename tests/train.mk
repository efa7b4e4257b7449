# tests/train.mk: rb_train.  Layer gradient checks, loader fuzzing,
# end-to-end MPI training.  Only with BLAS, like rb_train itself.
if HAVE_BLAS
check_PROGRAMS += tests/train/train_layer_check tests/train/train_loader_fuzz
tests_train_train_layer_check_SOURCES = tests/train/train_layer_check.c
tests_train_train_layer_check_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS)
tests_train_train_layer_check_LDADD = benchmarks/nn/libnn.a $(BLAS_LIBS) -lm
tests_train_train_loader_fuzz_SOURCES = tests/train/train_loader_fuzz.c
tests_train_train_loader_fuzz_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS)
tests_train_train_loader_fuzz_LDADD = benchmarks/nn/libnn.a $(BLAS_LIBS) -lm
TESTS += tests/train/train_layer_check tests/train/train-loaders.sh tests/train/train-mpi.sh \
	tests/train/train-memory.sh
dist_check_SCRIPTS += tests/train/train-loaders.sh tests/train/train-mpi.sh tests/train/train-memory.sh
# embedlm on dict-gcide: loader refusals, dense = agsparse at 2 ranks, the
# embedding's share, rows and density in the archive.
TESTS += tests/train/train-embedlm.sh
dist_check_SCRIPTS += tests/train/train-embedlm.sh
# PyTorch anchors: SKIP where /usr/bin/python3 has no torch.
TESTS += tests/train/train-anchors.sh tests/train/torch-train.sh
dist_check_SCRIPTS += tests/train/train-anchors.sh tests/train/torch-train.sh
EXTRA_DIST += benchmarks/anchors/torch_common.py benchmarks/anchors/torch_lenet.py \
	benchmarks/anchors/torch_wordlm.py benchmarks/anchors/torch_compare.py
EXTRA_DIST += tests/train/train_lib.sh
# GPU models: rb_train -d cuda is refused cleanly without a GPU
# (then SKIP); with one, CPU/GPU agreement of every layer and of training.
TESTS += tests/train/train-gpu.sh
dist_check_SCRIPTS += tests/train/train-gpu.sh
EXTRA_DIST += tests/train/train_gpu_check.c
if HAVE_TRAIN_GPU
check_PROGRAMS += tests/train/train_gpu_check
tests_train_train_gpu_check_SOURCES = tests/train/train_gpu_check.c
tests_train_train_gpu_check_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS) \
	$(CUDA_CFLAGS)
tests_train_train_gpu_check_LDADD = benchmarks/nn/libnn.a $(LIBREDUCER) $(NN_GPU_LIBS) \
	$(BLAS_LIBS) -lm
TESTS += tests/train/train_gpu_check
endif
endif
