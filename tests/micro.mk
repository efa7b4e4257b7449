# rb_micro command line, exit codes and validation.
TESTS += tests/micro_usage.sh tests/micro_exit_codes.sh tests/micro_repeat.sh tests/micro_json.sh tests/micro_model.sh tests/micro_memory.sh tests/micro_rows_input.sh
dist_check_SCRIPTS += tests/micro_usage.sh tests/micro_exit_codes.sh tests/micro_repeat.sh tests/micro_json.sh tests/micro_model.sh tests/micro_memory.sh tests/micro_rows_input.sh
EXTRA_DIST += tests/install-deps.sh tests/run-suite.sh
