dnl RB_CHECK_SIMGRID: SimGrid SMPI build: rb_micro and rb_train under simulated clusters (docs/simgrid.md).
dnl
dnl   SMPI_PRETEND_CC=1 ./configure --with-simgrid CC=smpicc
dnl
dnl SMPI_PRETEND_CC=1 is needed for configure (and for any later
dnl `config.status --recheck` that make runs when configure.ac changed):
dnl without it smpicc's test programs need smpirun and configure fails with
dnl "cannot run C compiled programs".  make itself needs no environment.
dnl Defines HAVE_SIMGRID and RB_SIMGRID, AM_CONDITIONAL SIMGRID.  PAPI,
dnl hwloc and CUDA are turned off in an SMPI build (simulated ranks share
dnl one process: hardware counters, binding and GPUs would describe the host,
dnl not the simulated platform); the summary says so.
AC_DEFUN([RB_CHECK_SIMGRID], [
  AC_ARG_WITH([simgrid],
    [AS_HELP_STRING([--with-simgrid],
      [build for SimGrid SMPI (CC=smpicc, SMPI_PRETEND_CC=1 while configuring)])],
    [], [with_simgrid=check])
  have_simgrid=no
  rb_simgrid_summary=""
  dnl auto: on when CC is smpicc
  AS_CASE([$CC], [*smpicc*], [AS_IF([test "x$with_simgrid" = xcheck], [with_simgrid=yes])])
  AS_IF([test "x$with_simgrid" = xyes], [
    AC_MSG_CHECKING([whether $CC is SimGrid's smpicc])
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <smpi/smpi.h>
#include <simgrid/version.h>]], [[smpi_execute(0.0); return SIMGRID_VERSION_MAJOR;]])],
      [have_simgrid=yes], [have_simgrid=no])
    AC_MSG_RESULT([$have_simgrid])
    AS_IF([test "x$have_simgrid" != xyes],
      [AC_MSG_ERROR([--with-simgrid needs CC=smpicc (Debian: apt-get install libsimgrid-dev) and SMPI_PRETEND_CC=1 while configuring])])
    AC_DEFINE([HAVE_SIMGRID], [1], [Define for a SimGrid SMPI build])
    AC_DEFINE([RB_SIMGRID], [1], [Define for a SimGrid SMPI build])
    rb_simgrid_summary="(PAPI, hwloc, CUDA skipped: simulated ranks share one host process, counters/binding/GPUs would not describe the simulated platform)"
    AS_IF([test "x$have_papi" = xyes || test "x$have_hwloc" = xyes || test "x$have_cuda" = xyes],
      [AC_MSG_WARN([SimGrid build: PAPI/hwloc/CUDA were found but describe the host, not the simulated platform; configure with --without-papi --without-hwloc --without-cuda])])
  ])
  AM_CONDITIONAL([SIMGRID], [test "x$have_simgrid" = xyes])
])
