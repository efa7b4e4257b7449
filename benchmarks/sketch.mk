# benchmarks/sketch: count-sketch benchmark.  rb_sketch measures
# single-core memcpy bandwidth, sketch encode/decode throughput and s2's
# decode error in one run (benchmarks/sketch/rb_sketch.c says what is counted).
bin_PROGRAMS += benchmarks/rb_sketch
benchmarks_rb_sketch_SOURCES = benchmarks/sketch/sketch.h benchmarks/sketch/sketch_options.c \
	benchmarks/sketch/rb_sketch.c
benchmarks_rb_sketch_LDADD = $(BENCH_LIBS)
