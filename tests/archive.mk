# Results archive, metadata, PAPI, hwloc binding, rb-archive; no
# litter and kills at any moment.
ARCHIVE_TESTS = tests/archive_schema.sh tests/archive_atomic.sh tests/archive_papi.sh tests/archive_tool.sh \
	tests/archive_litter.sh tests/kill_runs.sh tests/machine_load.sh
TESTS += $(ARCHIVE_TESTS)
dist_check_SCRIPTS += $(ARCHIVE_TESTS) tests/archive_schema_check.py tests/archive_lib.sh
