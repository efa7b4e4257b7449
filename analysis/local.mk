# The analysis tools and the package they import, installed together:
# the scripts in bindir, the package in $(pkgdatadir)/rbanalysis, where
# each script looks for it (../share/reducerbench from its own directory;
# in the source tree the package sits next to the scripts).
# tests/analysis/installed.sh runs the installed tools.
dist_bin_SCRIPTS += analysis/rb-report analysis/rb-archive analysis/rb-torch-trace
rbanalysisdir = $(pkgdatadir)/rbanalysis
dist_rbanalysis_DATA = \
	analysis/rbanalysis/__init__.py analysis/rbanalysis/claims.py \
	analysis/rbanalysis/cli.py analysis/rbanalysis/compare.py \
	analysis/rbanalysis/crossover.py analysis/rbanalysis/wire.py \
	analysis/rbanalysis/document.py analysis/rbanalysis/figures.py \
	analysis/rbanalysis/formatting.py analysis/rbanalysis/load.py \
	analysis/rbanalysis/micro.py analysis/rbanalysis/stats.py \
	analysis/rbanalysis/torchtrace.py analysis/rbanalysis/training.py \
	analysis/rbanalysis/validate.py analysis/rbanalysis/simwire.py \
	analysis/rbanalysis/workload.py analysis/rbanalysis/frontier.py \
	analysis/rbanalysis/schema.py analysis/rbanalysis/atomic.py \
	analysis/rbanalysis/publish.py analysis/rbanalysis/report.py \
	analysis/rbanalysis/report_sections.py analysis/rbanalysis/report_terms.py \
	analysis/rbanalysis/runmeta.py analysis/rbanalysis/options.py \
	analysis/rbanalysis/claim_table.py analysis/rbanalysis/plotting.py \
	analysis/rbanalysis/screen.py
# The archive contract the package reads (schema.py finds it at
# ../archive-schema.json once installed, ../../docs/ in the tree).
dist_pkgdata_DATA = docs/archive-schema.json
