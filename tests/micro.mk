# rb_micro command line, exit codes and validation.
TESTS += tests/micro/micro_usage.sh tests/micro/micro_exit_codes.sh tests/micro/micro_repeat.sh tests/micro/micro_json.sh tests/micro/micro_model.sh tests/micro/micro_memory.sh tests/micro/micro_rows_input.sh tests/micro/micro_edges.sh
dist_check_SCRIPTS += tests/micro/micro_usage.sh tests/micro/micro_exit_codes.sh tests/micro/micro_repeat.sh tests/micro/micro_json.sh tests/micro/micro_model.sh tests/micro/micro_memory.sh tests/micro/micro_rows_input.sh tests/micro/micro_edges.sh
EXTRA_DIST += tests/install-deps.sh tests/run-suite.sh
