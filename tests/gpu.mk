# GPU path.  Without a GPU the kernel and device tests skip (exit
# 77, reason on stderr, SKIP in the summary) except what can be checked
# without one: the CUDA build itself, configure's refusal of an arch the
# toolkit cannot build, and clean RB_ERR_DEVICE failures of the device API.
EXTRA_DIST += tests/gpu/gpu_device.sh tests/gpu/gpu_micro.sh tests/gpu/gpu_configure.sh \
	tests/gpu/kit/make-kit tests/gpu/kit/run
TESTS += tests/gpu/gpu_configure.sh
tests_gpu_gpu_kernels_SOURCES = tests/gpu/gpu_kernels.c
tests_gpu_gpu_kernels_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS)
tests_gpu_gpu_kernels_LDADD = $(LIBREDUCER)
tests_gpu_gpu_device_SOURCES = tests/gpu/gpu_device.c
tests_gpu_gpu_device_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS)
tests_gpu_gpu_device_LDADD = $(LIBREDUCER)
if HAVE_CUDA
check_PROGRAMS += tests/gpu/gpu_kernels tests/gpu/gpu_device
TESTS += tests/gpu/gpu_kernels tests/gpu/gpu_device.sh tests/gpu/gpu_micro.sh
endif

# The GPU microbenchmark (benchmarks/gpubench/rb_gpubench.c) lives with the GPU files.
include benchmarks/gpu.mk
