# tests/train.mk
