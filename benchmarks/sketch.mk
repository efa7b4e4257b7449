# benchmarks/sketch.mk: count-sketch benchmark (issue 3)
