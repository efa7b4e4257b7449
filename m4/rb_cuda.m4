dnl RB_CHECK_CUDA: CUDA toolkit, NCCL and cuDNN for device buffers (docs/gpu.md).
dnl
dnl   --with-cuda[=DIR]        toolkit prefix (default: the prefix of the nvcc
dnl                            on PATH, else /usr/local/cuda, when nvcc exists)
dnl   --with-nccl[=DIR]        NCCL prefix (default: the CUDA prefix, then the
dnl                            compiler's default paths)
dnl   --with-cudnn[=DIR]       cuDNN prefix (default: likewise)
dnl   --with-cuda-arch=LIST    e.g. "75,80,90" or "sm_90"; default: every real
dnl                            architecture nvcc can build from sm_75 up
dnl
dnl Only the runtime is linked (-lcudart, with an rpath): never -lcuda, whose
dnl only copy on a GPU-less build machine is a stub.  Defines HAVE_CUDA,
dnl HAVE_NCCL, HAVE_CUDNN, HAVE_CUBLAS and their AM_CONDITIONALs; substitutes
dnl NVCC, NVCCFLAGS, CUDA_GENCODE, CUDA_CFLAGS/LIBS, NCCL_CFLAGS/LIBS,
dnl CUDNN_CFLAGS/LIBS, CUBLAS_LIBS; sets rb_cuda_summary for the summary.

dnl _RB_CUDA_LIBDIR(PREFIX): the library directory of a CUDA-style prefix.
AC_DEFUN([_RB_CUDA_LIBDIR], [`for d in "$1/lib64" "$1/lib" "$1/targets/x86_64-linux/lib"; do
  if test -d "$d"; then echo "$d"; break; fi; done`])

dnl _RB_CUDA_PROBE(VAR-PREFIX, PREFIX, HEADER, LIB, FUNCTION, HAVE-VAR)
dnl Sets VAR_CFLAGS / VAR_LIBS and HAVE-VAR=yes when HEADER compiles and
dnl FUNCTION links from -lLIB (next to libcudart).
dnl An empty PREFIX means the compiler's default paths (e.g. Debian/Ubuntu
dnl packages: /usr/include/nccl.h, /usr/lib/x86_64-linux-gnu/libnccl.so).
AC_DEFUN([_RB_CUDA_PROBE], [
  AS_IF([test -n "$2"], [
    rb_probe_libdir=_RB_CUDA_LIBDIR([$2])
    $1_CFLAGS="-I$2/include"
    $1_LIBS="-L$rb_probe_libdir -Wl,-rpath,$rb_probe_libdir -l$4"
  ], [$1_CFLAGS=""; $1_LIBS="-l$4"])
  save_CPPFLAGS=$CPPFLAGS; save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $$1_CFLAGS $CUDA_CFLAGS"; LIBS="$$1_LIBS $CUDA_LIBS $LIBS"
  AC_MSG_CHECKING([for $5 in -l$4 (m4_default([$2], [system paths]))])
  dnl A prefix must hold the header itself: the CUDA include path or the
  dnl system's could otherwise satisfy the check for a wrong DIR.
  AS_IF([test -n "$2" && test ! -f "$2/include/$3"], [$6=no],
    [AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <$3>]], [[(void)$5;]])],
      [$6=yes], [$6=no])])
  AC_MSG_RESULT([$$6])
  CPPFLAGS=$save_CPPFLAGS; LIBS=$save_LIBS
])

AC_DEFUN([RB_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
      [CUDA toolkit prefix (default: where nvcc is, else /usr/local/cuda, when nvcc is found)])],
    [], [with_cuda=check])
  AC_ARG_WITH([nccl],
    [AS_HELP_STRING([--with-nccl@<:@=DIR@:>@], [NCCL prefix (default: the CUDA prefix, when found)])],
    [], [with_nccl=check])
  AC_ARG_WITH([cudnn],
    [AS_HELP_STRING([--with-cudnn@<:@=DIR@:>@], [cuDNN prefix (default: the CUDA prefix, when found)])],
    [], [with_cudnn=check])
  AC_ARG_WITH([cuda-arch],
    [AS_HELP_STRING([--with-cuda-arch=LIST],
      [GPU architectures, e.g. 75,80,90 (default: every sm_75+ the toolkit can build; P100 = 60 needs CUDA <= 12)])],
    [], [with_cuda_arch=default])
  AC_ARG_VAR([NVCC], [CUDA compiler])
  AC_ARG_VAR([NVCCFLAGS], [extra flags for nvcc (default: -O3)])

  have_cuda=no; have_nccl=no; have_cudnn=no; have_cublas=no
  rb_cuda_summary=""; rb_cuda_prefix=""; CUDA_GENCODE=""; rb_cuda_archs=""
  CUDA_CFLAGS=""; CUDA_LIBS=""; NCCL_CFLAGS=""; NCCL_LIBS=""
  CUDNN_CFLAGS=""; CUDNN_LIBS=""; CUBLAS_LIBS=""
  : ${NVCCFLAGS="-O3"}

  dnl ---- the toolkit prefix
  AS_CASE([$with_cuda],
    [no], [],
    [yes|check], [
      AS_IF([test -n "$NVCC"], [rb_nvcc_path=`command -v "$NVCC"`],
        [rb_nvcc_path=`command -v nvcc 2>/dev/null`])
      AS_IF([test -z "$rb_nvcc_path" && test -x /usr/local/cuda/bin/nvcc],
        [rb_nvcc_path=/usr/local/cuda/bin/nvcc])
      AS_IF([test -n "$rb_nvcc_path"],
        [rb_cuda_prefix=`AS_DIRNAME(["$rb_nvcc_path"])`
         rb_cuda_prefix=`AS_DIRNAME(["$rb_cuda_prefix"])`],
        [AS_IF([test "x$with_cuda" = xyes],
          [AC_MSG_ERROR([--with-cuda: nvcc not found on PATH nor in /usr/local/cuda/bin; give --with-cuda=DIR])])])],
    [rb_cuda_prefix=$with_cuda
     AS_IF([test -z "$NVCC"], [NVCC="$rb_cuda_prefix/bin/nvcc"])])

  AS_IF([test -n "$rb_cuda_prefix"], [
    AS_IF([test -z "$NVCC"], [NVCC="$rb_cuda_prefix/bin/nvcc"])
    AC_MSG_CHECKING([for nvcc])
    AS_IF([test -x "$NVCC" || command -v "$NVCC" >/dev/null 2>&1],
      [AC_MSG_RESULT([$NVCC])],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([--with-cuda=$rb_cuda_prefix: no nvcc at $NVCC (set NVCC=...)])])
    rb_cuda_version=`"$NVCC" --version 2>/dev/null | sed -n 's/.*release \([[0-9.]]*\),.*/\1/p'`
    AC_MSG_CHECKING([CUDA toolkit version])
    AC_MSG_RESULT([${rb_cuda_version:-unknown}])

    dnl ---- runtime library (never libcuda)
    rb_cuda_libdir=_RB_CUDA_LIBDIR([$rb_cuda_prefix])
    AS_IF([test -z "$rb_cuda_libdir"], [rb_cuda_libdir="$rb_cuda_prefix/lib64"])
    CUDA_CFLAGS="-I$rb_cuda_prefix/include"
    CUDA_LIBS="-L$rb_cuda_libdir -Wl,-rpath,$rb_cuda_libdir -lcudart"
    save_CPPFLAGS=$CPPFLAGS; save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $CUDA_CFLAGS"; LIBS="$CUDA_LIBS $LIBS"
    AC_MSG_CHECKING([for cudaGetDeviceCount in -lcudart])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cuda_runtime_api.h>]],
        [[int n = 0; return (int)cudaGetDeviceCount(&n);]])],
      [have_cuda=yes], [have_cuda=no])
    AC_MSG_RESULT([$have_cuda])
    CPPFLAGS=$save_CPPFLAGS; LIBS=$save_LIBS
    AS_IF([test "x$have_cuda" = xno && test "x$with_cuda" != xcheck],
      [AC_MSG_ERROR([--with-cuda: cannot compile and link a CUDA runtime program with $CUDA_CFLAGS $CUDA_LIBS])])
    dnl A toolkit found but unusable (nvcc without libcudart, say) must not
    dnl leave its flags behind: src/local.mk links $(CUDA_LIBS) unconditionally.
    AS_IF([test "x$have_cuda" = xno],
      [rb_cuda_summary="(nvcc at $NVCC, but no CUDA runtime links from $rb_cuda_libdir)"
       CUDA_CFLAGS=""; CUDA_LIBS=""])
  ])

  dnl ---- architectures nvcc can target
  AS_IF([test "x$have_cuda" = xyes], [
    rb_cuda_supported=`"$NVCC" --list-gpu-code 2>/dev/null | sed -n 's/^sm_\([[0-9]]*\)[[a-z]]*$/\1/p' | sort -n -u | tr '\n' ' '`
    AS_IF([test -z "$rb_cuda_supported"], [
      dnl nvcc before 11.0 has no --list-gpu-code: try each candidate.
      echo '__global__ void k(void) {}' > conftest.cu
      for a in 35 37 50 52 53 60 61 62 70 72 75 80 86 87 89 90; do
        AS_IF(["$NVCC" -c -arch=sm_$a -o conftest.o conftest.cu >/dev/null 2>&1],
          [rb_cuda_supported="$rb_cuda_supported$a "])
      done
      rm -f conftest.cu conftest.o])
    rb_cuda_supported=`echo $rb_cuda_supported`
    AC_MSG_CHECKING([architectures nvcc $rb_cuda_version can build])
    AC_MSG_RESULT([$rb_cuda_supported])
    AS_IF([test "x$with_cuda_arch" = xdefault || test "x$with_cuda_arch" = xyes], [
      for a in $rb_cuda_supported; do
        AS_IF([test "$a" -ge 75], [rb_cuda_archs="$rb_cuda_archs$a "])
      done
      AS_IF([test -z "$rb_cuda_archs"], [rb_cuda_archs=$rb_cuda_supported])
    ], [
      for a in `echo "$with_cuda_arch" | tr ',;' '  ' | sed -e 's/sm_//g' -e 's/compute_//g'`; do
        AS_CASE([" $rb_cuda_supported "], [*" $a "*], [rb_cuda_archs="$rb_cuda_archs$a "],
          [AS_IF([test "$a" -lt 75 2>/dev/null],
            [rb_arch_hint=" CUDA 13 dropped sm_60 (Pascal, P100), sm_61 and sm_70 (Volta, V100): build those with a CUDA <= 12 toolkit, e.g. --with-cuda=/usr/local/cuda-12.4 --with-cuda-arch=60 (docs/gpu.md)."],
            [rb_arch_hint=""])
           AC_MSG_ERROR([--with-cuda-arch: nvcc $rb_cuda_version ($NVCC) cannot target sm_$a; it can build: $rb_cuda_supported.$rb_arch_hint])])
      done
    ])
    AS_IF([test -z "$rb_cuda_archs"], [AC_MSG_ERROR([--with-cuda-arch: empty architecture list])])
    dnl Real code for every architecture, plus PTX of the newest so a
    dnl future GPU can JIT it.
    rb_cuda_newest=""
    for a in $rb_cuda_archs; do
      CUDA_GENCODE="$CUDA_GENCODE -gencode arch=compute_$a,code=sm_$a"
      rb_cuda_newest=$a
    done
    CUDA_GENCODE="$CUDA_GENCODE -gencode arch=compute_$rb_cuda_newest,code=compute_$rb_cuda_newest"
    rb_cuda_arch_list=`echo $rb_cuda_archs | tr ' ' ','`
    AC_MSG_CHECKING([whether nvcc builds for sm_$rb_cuda_arch_list])
    echo '__global__ void k(float *x) { atomicAdd(x, 1.0f); }' > conftest.cu
    AS_IF(["$NVCC" $NVCCFLAGS $CUDA_GENCODE -c -o conftest.o conftest.cu >conftest.err 2>&1],
      [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no])
       cat conftest.err >&AS_MESSAGE_LOG_FD
       rm -f conftest.cu conftest.o conftest.err
       AC_MSG_ERROR([$NVCC $NVCCFLAGS $CUDA_GENCODE cannot compile a kernel (see config.log)])])
    rm -f conftest.cu conftest.o conftest.err
    dnl nvcc objects in libreducer.a need the C++ runtime when linked by mpicc.
    CUDA_LIBS="$CUDA_LIBS -lstdc++"
    AC_DEFINE([HAVE_CUDA], [1], [Define if the CUDA runtime and nvcc are used])
    AC_DEFINE_UNQUOTED([RB_CUDA_TOOLKIT_VERSION], ["$rb_cuda_version"], [CUDA toolkit (nvcc) version])
    AC_DEFINE_UNQUOTED([RB_CUDA_ARCHS], ["`echo $rb_cuda_archs`"], [GPU architectures built (sm_XX)])
    rb_cuda_summary="(toolkit $rb_cuda_version at $rb_cuda_prefix, sm: `echo $rb_cuda_archs`)"
  ], [
    AS_IF([test "x$with_cuda_arch" != xdefault],
      [AC_MSG_WARN([--with-cuda-arch ignored: CUDA is not used])])
  ])

  dnl ---- NCCL, cuDNN and cuBLAS, each next to the toolkit unless told
  AS_IF([test "x$have_cuda" = xno], [
    AS_IF([test "x$with_nccl" != xno && test "x$with_nccl" != xcheck],
      [AC_MSG_ERROR([--with-nccl needs CUDA (--with-cuda)])])
    AS_IF([test "x$with_cudnn" != xno && test "x$with_cudnn" != xcheck],
      [AC_MSG_ERROR([--with-cudnn needs CUDA (--with-cuda)])])
  ], [
    AS_CASE([$with_nccl], [no], [],
      [yes|check], [_RB_CUDA_PROBE([NCCL], [$rb_cuda_prefix], [nccl.h], [nccl], [ncclGetVersion], [have_nccl])
        AS_IF([test "x$have_nccl" = xno],
          [_RB_CUDA_PROBE([NCCL], [], [nccl.h], [nccl], [ncclGetVersion], [have_nccl])])],
      [_RB_CUDA_PROBE([NCCL], [$with_nccl], [nccl.h], [nccl], [ncclGetVersion], [have_nccl])])
    AS_IF([test "x$have_nccl" = xno && test "x$with_nccl" != xno && test "x$with_nccl" != xcheck],
      [AC_MSG_ERROR([--with-nccl given but nccl.h / -lnccl were not usable])])
    AS_CASE([$with_cudnn], [no], [],
      [yes|check], [_RB_CUDA_PROBE([CUDNN], [$rb_cuda_prefix], [cudnn.h], [cudnn], [cudnnGetVersion], [have_cudnn])
        AS_IF([test "x$have_cudnn" = xno],
          [_RB_CUDA_PROBE([CUDNN], [], [cudnn.h], [cudnn], [cudnnGetVersion], [have_cudnn])])],
      [_RB_CUDA_PROBE([CUDNN], [$with_cudnn], [cudnn.h], [cudnn], [cudnnGetVersion], [have_cudnn])])
    AS_IF([test "x$have_cudnn" = xno && test "x$with_cudnn" != xno && test "x$with_cudnn" != xcheck],
      [AC_MSG_ERROR([--with-cudnn given but cudnn.h / -lcudnn were not usable])])
    _RB_CUDA_PROBE([CUBLAS], [$rb_cuda_prefix], [cublas_v2.h], [cublas], [cublasCreate], [have_cublas])
    AS_IF([test "x$have_cublas" = xno],
      [_RB_CUDA_PROBE([CUBLAS], [], [cublas_v2.h], [cublas], [cublasCreate], [have_cublas])])
  ])
  AS_IF([test "x$have_nccl" = xyes],
    [AC_DEFINE([HAVE_NCCL], [1], [Define if NCCL is used for device buffers])],
    [NCCL_CFLAGS=""; NCCL_LIBS=""])
  AS_IF([test "x$have_cudnn" = xyes],
    [AC_DEFINE([HAVE_CUDNN], [1], [Define if cuDNN is used])],
    [CUDNN_CFLAGS=""; CUDNN_LIBS=""])
  AS_IF([test "x$have_cublas" = xyes],
    [AC_DEFINE([HAVE_CUBLAS], [1], [Define if cuBLAS is used])],
    [CUBLAS_CFLAGS=""; CUBLAS_LIBS=""])

  AC_SUBST([NVCC])
  AC_SUBST([NVCCFLAGS])
  AC_SUBST([CUDA_GENCODE])
  AC_SUBST([CUDA_CFLAGS])
  AC_SUBST([CUDA_LIBS])
  AC_SUBST([NCCL_CFLAGS])
  AC_SUBST([NCCL_LIBS])
  AC_SUBST([CUDNN_CFLAGS])
  AC_SUBST([CUDNN_LIBS])
  AC_SUBST([CUBLAS_CFLAGS])
  AC_SUBST([CUBLAS_LIBS])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$have_cuda" = xyes])
  AM_CONDITIONAL([HAVE_NCCL], [test "x$have_nccl" = xyes])
  AM_CONDITIONAL([HAVE_CUDNN], [test "x$have_cudnn" = xyes])
  AM_CONDITIONAL([HAVE_CUBLAS], [test "x$have_cublas" = xyes])
])
