# rb_train: data-parallel training of real models (issue 6).  Needs BLAS.
if HAVE_BLAS
noinst_LIBRARIES += benchmarks/train/libtrain.a
benchmarks_train_libtrain_a_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS)
benchmarks_train_libtrain_a_SOURCES = \
	benchmarks/train/layers.h benchmarks/train/layers.c \
	benchmarks/train/models.h benchmarks/train/models.c \
	benchmarks/train/data.h benchmarks/train/data_idx.c \
	benchmarks/train/data_cifar.c benchmarks/train/data_text.c

bin_PROGRAMS += benchmarks/rb_train
benchmarks_rb_train_SOURCES = benchmarks/train/train_main.c benchmarks/train/train.h \
	benchmarks/train/train_archive.c
benchmarks_rb_train_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS) $(HDF5_CFLAGS)
benchmarks_rb_train_LDADD = benchmarks/train/libtrain.a $(BENCH_LIBS) $(BLAS_LIBS) -lm
endif
