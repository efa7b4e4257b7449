# tests/archive.mk
