# libnn: the neural-network library under rb_train (docs/architecture.md):
# layers, their threads and AVX kernels, the models, the data loaders, and
# the models' GPU mirror.  Every name it exports starts with nn_
# (tests/arch/nn_exports.sh).  Needs BLAS.  The GPU models (cuDNN, cuBLAS,
# gpu_kernels.cu) are built when configure found all of CUDA, cuDNN and
# cuBLAS; gpu_model_none.c else.
NN_GPU_FILES = benchmarks/nn/gpu_model.c benchmarks/nn/gpu_model_none.c \
	benchmarks/nn/gpu_kernels.cu benchmarks/nn/gpu_kernels.h
EXTRA_DIST += $(NN_GPU_FILES)
if HAVE_BLAS
noinst_LIBRARIES += benchmarks/nn/libnn.a
benchmarks_nn_libnn_a_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS)
benchmarks_nn_libnn_a_SOURCES = \
	benchmarks/nn/layers.h benchmarks/nn/layers.c benchmarks/nn/layer.h \
	benchmarks/nn/layer_conv.h benchmarks/nn/layer_conv.c benchmarks/nn/layer_bias.c \
	benchmarks/nn/layer_threads.h benchmarks/nn/layer_threads.c \
	benchmarks/nn/small_gemm.h benchmarks/nn/small_gemm.c benchmarks/nn/avx512.h \
	benchmarks/nn/conv_avx512.h benchmarks/nn/conv_avx512.c \
	benchmarks/nn/dense_avx512.h benchmarks/nn/dense_avx512.c \
	benchmarks/nn/models.h benchmarks/nn/models.c \
	benchmarks/nn/gpu_model.h \
	benchmarks/nn/data.h benchmarks/nn/data_idx.c \
	benchmarks/nn/data_cifar.c benchmarks/nn/data_text.h benchmarks/nn/data_text.c \
	benchmarks/nn/data_fortunes.c benchmarks/nn/data_dictd.c
# What a program linking libnn.a adds for the GPU models.  They also call
# libreducer's CUDA sparsification kernels (gpu_sparsify), so such a
# program links $(LIBREDUCER) too.
NN_GPU_LIBS =
if HAVE_TRAIN_GPU
benchmarks_nn_libnn_a_SOURCES += benchmarks/nn/gpu_model.c
benchmarks_nn_libnn_a_CPPFLAGS += $(CUDA_CFLAGS) $(CUDNN_CFLAGS) $(CUBLAS_CFLAGS)
benchmarks_nn_libnn_a_LIBADD = benchmarks/nn/gpu_kernels.$(OBJEXT)
NN_GPU_LIBS += $(CUDNN_LIBS) $(CUBLAS_LIBS) $(CUDA_LIBS)
CLEANFILES += benchmarks/nn/gpu_kernels.$(OBJEXT)
benchmarks/nn/gpu_kernels.$(OBJEXT): $(srcdir)/benchmarks/nn/gpu_kernels.cu \
		$(srcdir)/benchmarks/nn/gpu_kernels.h
	@$(MKDIR_P) benchmarks/nn
	$(AM_V_GEN)$(NVCC_COMPILE) -c -o $@ $(srcdir)/benchmarks/nn/gpu_kernels.cu
else
benchmarks_nn_libnn_a_SOURCES += benchmarks/nn/gpu_model_none.c
endif
endif
