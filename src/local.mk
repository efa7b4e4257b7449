# libreducer: the reducers and what they share.
# The reducers' files: src/reducers.mk, made from the registry
# (src/reducers.def) by src/reducers-mk; remade, and the build with it,
# when the registry changes.
include src/reducers.mk
EXTRA_DIST += src/reducers-mk src/reducers.def
$(srcdir)/src/reducers.mk: $(srcdir)/src/reducers.def $(srcdir)/src/reducers-mk
	$(AM_V_GEN)$(SHELL) $(srcdir)/src/reducers-mk $(srcdir)/src/reducers.def >$@.tmp && mv $@.tmp $@

lib_LIBRARIES += src/libreducer.a
# The public face: what a program outside src/ may include (the tree's
# own programs too; tests/arch/include_graph.py checks).  The other headers
# of src/ are the library's own.
include_HEADERS += src/reducer.h src/reducer_sparse.h src/reducer_sketch.h
src_libreducer_a_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS) $(NCCL_CFLAGS)
src_libreducer_a_SOURCES = \
	src/rb_internal.h src/rb_device.h src/reducer_sparse.h src/sparse.c src/rowset.h src/rowset.c \
	src/reducer_sketch.h src/countsketch.c src/countsketch_walk.h src/countsketch_walk.c \
	src/exchange.h src/exchange.c \
	src/errors.c src/base.c src/comm.c src/options.c src/config.c src/core.c src/state.c src/node.c \
	src/registry.c src/model.c $(REDUCER_SOURCES)
if !HAVE_CUDA
src_libreducer_a_SOURCES += src/device_none.c
endif
# CUDA kernels and the device layer: src/cuda.mk
include src/cuda.mk

# libreducer as a shared library too, for programs and bindings outside the
# tree (pkg-config libreducer); the suite's own programs link the archive
# above.  libtool compiles the same sources position-independent into a
# convenience library, which the shared library and the Python module wrap.
# Only the functions of reducer.h are exported (libreducer.sym: the ABI;
# tests/lib/shared_install.sh checks the two agree).
EXTRA_DIST += src/libreducer.sym src/libreducer.pc.in
if BUILD_SHARED
noinst_LTLIBRARIES += src/libreducer_pic.la
src_libreducer_pic_la_CPPFLAGS = $(src_libreducer_a_CPPFLAGS)
src_libreducer_pic_la_SOURCES = $(src_libreducer_a_SOURCES)
src_libreducer_pic_la_LIBADD = $(LIBREDUCER_PIC_CUDA)
lib_LTLIBRARIES += src/libreducer.la
src_libreducer_la_SOURCES =
src_libreducer_la_LIBADD = src/libreducer_pic.la $(CUDA_LIBS) $(NCCL_LIBS) -lm
# version-info current:revision:age; soname libreducer.so.(current - age).
# 1:0:1: rb_state_size/save/load added (programs built against 0 still run).
# 2:0:0: rb_options grew (ext: the options of reducers without a field),
# so rb_config changed size: programs built against 0 or 1 must be rebuilt.
src_libreducer_la_LDFLAGS = -version-info 2:0:0 -no-undefined \
	-export-symbols $(srcdir)/src/libreducer.sym
EXTRA_src_libreducer_la_DEPENDENCIES = $(srcdir)/src/libreducer.sym
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = src/libreducer.pc
endif
DISTCLEANFILES += src/libreducer.pc

# The Python binding: src/python/local.mk
include src/python/local.mk

# What a program linking libreducer needs.
LIBREDUCER = src/libreducer.a $(CUDA_LIBS) $(NCCL_LIBS) -lm
