# tests/analysis.mk: rb-report on files the real benchmarks write, and its
# statistics and claims on synthetic archives with known values.
TESTS += tests/analysis/report.sh tests/analysis/verdict.sh \
	tests/analysis/stats_unit.py tests/analysis/claims_synth.py \
	tests/analysis/busy_synth.py
dist_check_SCRIPTS += tests/analysis/report.sh tests/analysis/report_check.py \
	tests/analysis/verdict.sh tests/analysis/verdict_check.py \
	tests/analysis/stats_unit.py tests/analysis/claims_synth.py \
	tests/analysis/busy_synth.py tests/analysis/synth.py
EXTRA_DIST += analysis/rb-report analysis/rbanalysis/__init__.py \
	analysis/rbanalysis/load.py analysis/rbanalysis/micro.py \
	analysis/rbanalysis/training.py analysis/rbanalysis/claims.py \
	analysis/rbanalysis/figures.py analysis/rbanalysis/document.py \
	analysis/rbanalysis/cli.py analysis/rbanalysis/stats.py \
	analysis/rbanalysis/compare.py
