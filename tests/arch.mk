# tests/arch.mk: the architecture (docs/architecture.md): the
# include and call graphs of src/ and benchmarks/ have no circle and nothing
# includes or calls a room its room may not use (library < harness <
# programs; nn: the library only, used by rb_train alone).
TESTS += tests/arch/include_graph.py
dist_check_SCRIPTS += tests/arch/include_graph.py
# The harness exports only bench_ names (the library owns rb_): nm over
# libbench.a.
TESTS += tests/arch/harness_symbols.sh
dist_check_SCRIPTS += tests/arch/harness_symbols.sh
# The checker itself fails where it must (an empty or wrong path, an
# upward include, a circle), on small trees the test makes.
TESTS += tests/arch/include_graph_fails.sh
dist_check_SCRIPTS += tests/arch/include_graph_fails.sh

# The neural-network library exports only nn_ names and needs nothing of
# rb_train or the harness (read by nm from libnn.a).
TESTS += tests/arch/nn_exports.sh
dist_check_SCRIPTS += tests/arch/nn_exports.sh

# The documents' references resolve: links and their anchors, named
# sections (docs/X.md "Section"), paths of the tree; and the checker fails
# where it must.
TESTS += tests/arch/doc_links.py tests/arch/doc_links_fails.sh
dist_check_SCRIPTS += tests/arch/doc_links.py tests/arch/doc_links_fails.sh
