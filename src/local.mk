# libreducer: the reducers and what they share.
lib_LIBRARIES += src/libreducer.a
include_HEADERS += src/reducer.h
src_libreducer_a_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS) $(NCCL_CFLAGS)
src_libreducer_a_SOURCES = \
	src/rb_internal.h src/rb_device.h src/sparse.h src/sparse.c \
	src/countsketch.h src/countsketch.c \
	src/exchange.h src/exchange.c \
	src/errors.c src/base.c src/comm.c src/options.c src/config.c src/core.c src/node.c src/registry.c src/model.c \
	src/reducer_none.c src/reducer_dense.c src/reducer_agsparse.c \
	src/reducer_sparcml.c src/reducer_parallax.c src/reducer_omnireduce.c \
	src/reducer_oktopk.c src/reducer_zen.c \
	src/reducer_s2.c src/reducer_gossip.c
if !HAVE_CUDA
src_libreducer_a_SOURCES += src/device_none.c
endif
# CUDA kernels and the device layer: src/cuda.mk
include src/cuda.mk

# What a program linking libreducer needs.
LIBREDUCER = src/libreducer.a $(CUDA_LIBS) $(NCCL_LIBS) -lm
