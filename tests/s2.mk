# tests/s2.mk
