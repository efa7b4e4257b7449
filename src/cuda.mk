# CUDA part of libreducer: nvcc-compiled kernels and the device
# layer.  Absent when configure finds no CUDA (src/device_none.c stands in);
# the sources are distributed either way.
CUDA_KERNEL_FILES = src/cuda/rb_kernels.cu src/cuda/rb_kernels.h
EXTRA_DIST += $(CUDA_KERNEL_FILES) src/device_cuda.c

if HAVE_CUDA
src_libreducer_a_SOURCES += src/device_cuda.c src/cuda/rb_kernels.h
src_libreducer_a_LIBADD = src/cuda/rb_kernels.$(OBJEXT)
CLEANFILES += src/cuda/rb_kernels.$(OBJEXT)

# nvcc compiles host code with the C++ compiler it finds; -Xcompiler passes
# the warnings on.  NVCCFLAGS (configure, default -O3) and CUDA_GENCODE
# (--with-cuda-arch) come from configure.
NVCC_COMPILE = $(NVCC) $(NVCCFLAGS) $(CUDA_GENCODE) -std=c++17 \
	-I$(top_srcdir)/src -I$(top_srcdir)/src/cuda $(CUDA_CFLAGS) \
	-Xcompiler -Wall,-Wextra

src/cuda/rb_kernels.$(OBJEXT): $(srcdir)/src/cuda/rb_kernels.cu $(srcdir)/src/cuda/rb_kernels.h \
		$(srcdir)/src/countsketch.h $(srcdir)/src/sparse.h
	@$(MKDIR_P) src/cuda
	$(AM_V_GEN)$(NVCC_COMPILE) -c -o $@ $(srcdir)/src/cuda/rb_kernels.cu
endif
