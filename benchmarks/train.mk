# rb_train: data-parallel training of real models.  Needs BLAS.
# The GPU models (cuDNN, cuBLAS, train_kernels.cu) are built when
# configure found all of CUDA, cuDNN and cuBLAS; gpu_model_none.c else.
TRAIN_GPU_FILES = benchmarks/train/gpu_model.c benchmarks/train/gpu_model_none.c \
	benchmarks/train/train_kernels.cu benchmarks/train/train_kernels.h
EXTRA_DIST += $(TRAIN_GPU_FILES)
if HAVE_BLAS
noinst_LIBRARIES += benchmarks/train/libtrain.a
benchmarks_train_libtrain_a_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS)
benchmarks_train_libtrain_a_SOURCES = \
	benchmarks/train/layers.h benchmarks/train/layers.c \
	benchmarks/train/layer_threads.h benchmarks/train/layer_threads.c \
	benchmarks/train/small_gemm.h benchmarks/train/small_gemm.c \
	benchmarks/train/models.h benchmarks/train/models.c \
	benchmarks/train/gpu_model.h \
	benchmarks/train/data.h benchmarks/train/data_idx.c \
	benchmarks/train/data_cifar.c benchmarks/train/data_text.c
TRAIN_GPU_LIBS =
if HAVE_TRAIN_GPU
benchmarks_train_libtrain_a_SOURCES += benchmarks/train/gpu_model.c
benchmarks_train_libtrain_a_CPPFLAGS += $(CUDA_CFLAGS) $(CUDNN_CFLAGS) $(CUBLAS_CFLAGS)
benchmarks_train_libtrain_a_LIBADD = benchmarks/train/train_kernels.$(OBJEXT)
TRAIN_GPU_LIBS += $(CUDNN_LIBS) $(CUBLAS_LIBS) $(CUDA_LIBS)
CLEANFILES += benchmarks/train/train_kernels.$(OBJEXT)
benchmarks/train/train_kernels.$(OBJEXT): $(srcdir)/benchmarks/train/train_kernels.cu \
		$(srcdir)/benchmarks/train/train_kernels.h
	@$(MKDIR_P) benchmarks/train
	$(AM_V_GEN)$(NVCC_COMPILE) -c -o $@ $(srcdir)/benchmarks/train/train_kernels.cu
else
benchmarks_train_libtrain_a_SOURCES += benchmarks/train/gpu_model_none.c
endif

bin_PROGRAMS += benchmarks/rb_train
benchmarks_rb_train_SOURCES = benchmarks/train/train.h benchmarks/train/train_main.c \
	benchmarks/train/train_options.c benchmarks/train/train_data.c \
	benchmarks/train/train_ring.c benchmarks/train/train_device.c \
	benchmarks/train/train_sparsify.c benchmarks/train/train_reduce.c \
	benchmarks/train/train_optim.c benchmarks/train/train_eval.c \
	benchmarks/train/train_sgemm.c benchmarks/train/train_loop.c \
	benchmarks/train/train_memory.c \
	benchmarks/train/train_archive.c benchmarks/train/train_record.c
benchmarks_rb_train_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS) $(HDF5_CFLAGS)
benchmarks_rb_train_LDADD = benchmarks/train/libtrain.a $(BENCH_LIBS) $(TRAIN_GPU_LIBS) \
	$(BLAS_LIBS) -lm
endif
