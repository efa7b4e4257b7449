# tests/workload.mk: real gradients in the microbenchmark: Zipf supports,
# traces recorded by rb_train and by the PyTorch exporter, replayed by
# rb_micro; traces refused; the report's workload section.
WORKLOAD_TESTS = tests/workload/zipf.sh tests/workload/trace_replay.sh \
	tests/workload/trace_refused.sh tests/workload/torch_trace.sh \
	tests/workload/report_workload.sh tests/workload/anchors_authors.sh \
	tests/workload/trace_same.sh tests/workload/anchors_authors_train.sh
TESTS += $(WORKLOAD_TESTS)
dist_check_SCRIPTS += $(WORKLOAD_TESTS) tests/workload/trace_check.py tests/workload/gradgen_trace.py \
	tests/workload/report_workload_check.py
dist_check_DATA += tests/workload/workload_lib.sh
EXTRA_DIST += benchmarks/anchors/s2-authors benchmarks/anchors/s2-authors-train \
	benchmarks/anchors/s2_authors_port.py
# Ok-Topk's global top-k (oktopk_select=topk) against its authors' code
# when RB_OKTOPK_AUTHORS names a checkout (against the exact top-k:
# tests/lib/oktopk_topk.sh, tests/lib.mk).
TESTS += tests/workload/anchors_oktopk.sh
dist_check_SCRIPTS += tests/workload/anchors_oktopk.sh
EXTRA_DIST += benchmarks/anchors/oktopk-authors
