# tests/gossip.mk
