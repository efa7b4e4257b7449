# tests/analysis.mk: rb-report (issue 8) on files the real benchmarks write.
TESTS += tests/analysis/report.sh
dist_check_SCRIPTS += tests/analysis/report.sh tests/analysis/report_check.py
EXTRA_DIST += analysis/rb-report analysis/rbanalysis/__init__.py \
	analysis/rbanalysis/load.py analysis/rbanalysis/micro.py \
	analysis/rbanalysis/training.py analysis/rbanalysis/claims.py \
	analysis/rbanalysis/figures.py analysis/rbanalysis/document.py \
	analysis/rbanalysis/cli.py
