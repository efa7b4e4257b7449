# rb-torch-train: PyTorch models trained with libreducer's reducers through
# the Python binding (src/python), beside PyTorch's own DDP hooks, archived
# as rb_train archives (/train) by the harness itself: the module
# _rbharness wraps benchmarks/harness's archive (the harness compiled
# position-independent for it).  Installed: the script in bindir, its
# package rbtorch in $(pkgdatadir), _rbharness in $(pkglibdir), where the
# script looks for them.  Needs the Python binding (configure).
RBTORCH_FILES = benchmarks/torch/rbtorch/__init__.py benchmarks/torch/rbtorch/cli.py \
	benchmarks/torch/rbtorch/data.py benchmarks/torch/rbtorch/models.py \
	benchmarks/torch/rbtorch/loop.py benchmarks/torch/rbtorch/archive.py
# binding-overhead: the binding's cost per call against rb_micro's (docs/python.md).
EXTRA_DIST += benchmarks/torch/_rbharness.c benchmarks/torch/rb-torch-train \
	$(RBTORCH_FILES) benchmarks/torch/binding-overhead
if HAVE_PYTHON
bin_SCRIPTS += benchmarks/torch/rb-torch-train
rbtorchdir = $(pkgdatadir)/rbtorch
rbtorch_DATA = $(RBTORCH_FILES)
# The anchors' helpers the driver shares (option types, OpenBLAS threads).
rbtorchcommondir = $(pkgdatadir)
rbtorchcommon_DATA = benchmarks/anchors/torch_common.py
noinst_LTLIBRARIES += benchmarks/libbench_pic.la
benchmarks_libbench_pic_la_SOURCES = $(benchmarks_libbench_a_SOURCES)
benchmarks_libbench_pic_la_CPPFLAGS = $(benchmarks_libbench_a_CPPFLAGS)
benchmarks/harness/benchmarks_libbench_pic_la-metadata.lo: benchmarks/harness/rb_gitrev.h
pkglib_LTLIBRARIES = benchmarks/torch/_rbharness.la
benchmarks_torch__rbharness_la_SOURCES = benchmarks/torch/_rbharness.c
benchmarks_torch__rbharness_la_CPPFLAGS = $(AM_CPPFLAGS) $(PYTHON_CPPFLAGS) $(HDF5_CFLAGS)
benchmarks_torch__rbharness_la_LDFLAGS = -module -avoid-version -shared -no-undefined \
	-export-symbols-regex '^PyInit__rbharness$$'
benchmarks_torch__rbharness_la_LIBADD = benchmarks/libbench_pic.la src/libreducer_pic.la \
	$(HDF5_LIBS) $(PAPI_LIBS) $(HWLOC_LIBS) $(CUDA_LIBS) $(NCCL_LIBS) -lm
endif
