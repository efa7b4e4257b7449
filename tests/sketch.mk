# tests/sketch.mk: rb_sketch, the count sketch's own benchmark (its
# figures against the bounds its help states).
TESTS += tests/sketch/sketch_bench.sh
dist_check_SCRIPTS += tests/sketch/sketch_bench.sh
