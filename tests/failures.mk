# Every failure names itself: the library's error codes walked
# through the programs; rb_strerror's texts checked by a unit program.
check_PROGRAMS += tests/lib/test_strerror
tests_lib_test_strerror_SOURCES = tests/lib/test_strerror.c
tests_lib_test_strerror_LDADD = $(LIBREDUCER)
TESTS += tests/harness/fail_named.sh
dist_check_SCRIPTS += tests/harness/fail_named.sh
# Hostile but realistic use (bad data, full disks, racing writers, values
# no run can have, bad environment): a named failure or a correct run,
# never a crash, a hang, a lost result or an impossible value reported.
TESTS += tests/harness/hostile.sh
dist_check_SCRIPTS += tests/harness/hostile.sh
