# tests/archive.mk: the results archive, metadata, PAPI, hwloc binding,
# rb-archive; no litter and kills at any moment; every dataset checksummed.
ARCHIVE_TESTS = tests/archive/archive_schema.sh tests/archive/archive_atomic.sh tests/archive/archive_papi.sh tests/archive/archive_tool.sh \
	tests/archive/archive_litter.sh tests/archive/kill_runs.sh \
	tests/archive/archive_checksum.sh
TESTS += $(ARCHIVE_TESTS)
dist_check_SCRIPTS += $(ARCHIVE_TESTS) tests/archive/archive_schema_check.py tests/archive/archive_lib.sh \
	tests/archive/schema_doc.py
