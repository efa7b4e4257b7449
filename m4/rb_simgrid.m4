dnl RB_CHECK_SIMGRID: SimGrid SMPI build (PLACEHOLDER until issue 10 lands).
AC_DEFUN([RB_CHECK_SIMGRID], [
  have_simgrid=no
  AM_CONDITIONAL([SIMGRID], [false])
])
