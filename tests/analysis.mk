# tests/analysis.mk: rb-report on files the real benchmarks write, and its
# statistics and claims on synthetic archives with known values (runs over
# an emulated network: emulated_synth.py); the report's layout on a
# synthetic results directory (report_synth.py): the page in Chromium at
# 1280 px (layout_browser.sh), the terminal's 120 columns (terminal_check.py)
# and the figures' rules (figure_rules.py).
TESTS += tests/analysis/report.sh tests/analysis/verdict.sh \
	tests/analysis/stats_unit.py tests/analysis/claims_synth.py \
	tests/analysis/busy_synth.py tests/analysis/emulated_synth.py tests/analysis/render_check.py \
	tests/analysis/browser.sh tests/analysis/installed.sh tests/analysis/damaged_synth.py \
	tests/analysis/frontier_synth.py \
	tests/analysis/layout_browser.sh tests/analysis/terminal_check.py tests/analysis/figure_rules.py
dist_check_SCRIPTS += tests/analysis/report.sh tests/analysis/report_check.py \
	tests/analysis/verdict.sh tests/analysis/verdict_check.py \
	tests/analysis/stats_unit.py tests/analysis/claims_synth.py \
	tests/analysis/busy_synth.py tests/analysis/emulated_synth.py tests/analysis/synth.py \
	tests/analysis/render_check.py tests/analysis/browser.sh tests/analysis/browser_check.py \
	tests/analysis/installed.sh tests/analysis/damaged_synth.py tests/analysis/frontier_synth.py \
	tests/analysis/layout_browser.sh tests/analysis/terminal_check.py tests/analysis/figure_rules.py \
	tests/analysis/report_synth.py
# Module-level tests of analysis/rbanalysis under Debian's python3-pytest
# (SKIP without it): stats, claims' verdicts, load's busy rule, validate,
# the workload table's fastest exact reducer, compare's point keys, the
# wire floor and the link-rate crossovers of an emulated network, the
# matching of measured and simulated points of one network (simwire.py).
ANALYSIS_UNIT_TESTS = tests/analysis/unit/test_stats.py tests/analysis/unit/test_claims.py \
	tests/analysis/unit/test_load.py tests/analysis/unit/test_validate.py tests/analysis/unit/test_workload.py \
	tests/analysis/unit/test_compare.py tests/analysis/unit/test_wire.py tests/analysis/unit/test_simwire.py
TESTS += $(ANALYSIS_UNIT_TESTS)
dist_check_SCRIPTS += $(ANALYSIS_UNIT_TESTS)
dist_check_DATA += tests/analysis/unit/run_pytest.py tests/analysis/unit/conftest.py
