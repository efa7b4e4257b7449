# rb_train: data-parallel training of real models, on the neural-network
# library of benchmarks/nn (nn.mk).  Needs BLAS.
if HAVE_BLAS
bin_PROGRAMS += benchmarks/rb_train
benchmarks_rb_train_SOURCES = benchmarks/train/train.h benchmarks/train/train_main.c \
	benchmarks/train/train_options.c benchmarks/train/train_data.c \
	benchmarks/train/train_ring.c benchmarks/train/train_device.c \
	benchmarks/train/train_sparsify.c benchmarks/train/train_reduce.c \
	benchmarks/train/train_optim.c benchmarks/train/train_eval.c \
	benchmarks/train/train_sgemm.c benchmarks/train/train_loop.c \
	benchmarks/train/train_memory.c \
	benchmarks/train/train_archive.c benchmarks/train/train_record.c \
	benchmarks/train/train_checkpoint.c
benchmarks_rb_train_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS) $(HDF5_CFLAGS)
benchmarks_rb_train_LDADD = benchmarks/nn/libnn.a $(BENCH_LIBS) $(NN_GPU_LIBS) \
	$(BLAS_LIBS) -lm
endif
