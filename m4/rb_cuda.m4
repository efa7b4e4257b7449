dnl RB_CHECK_CUDA: CUDA / NCCL / cuDNN detection (PLACEHOLDER: off until the
dnl GPU path lands; see issue 9).
AC_DEFUN([RB_CHECK_CUDA], [
  have_cuda=no; have_nccl=no; have_cudnn=no; rb_cuda_summary=""
  AM_CONDITIONAL([HAVE_CUDA], [false])
  AM_CONDITIONAL([HAVE_NCCL], [false])
  AM_CONDITIONAL([HAVE_CUDNN], [false])
])
