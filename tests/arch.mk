# tests/arch.mk: the architecture (issue 26, docs/architecture.md): the
# include graph of src/ and benchmarks/ has no circle and nothing includes
# a floor above its own (library < harness < programs).
TESTS += tests/include_graph.py
dist_check_SCRIPTS += tests/include_graph.py
