# tests/analysis.mk
