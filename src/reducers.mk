# Made by src/reducers-mk from src/reducers.def (the registry): do not edit.
REDUCER_SOURCES = \
	src/reducer_none.c \
	src/reducer_dense.c \
	src/reducer_agsparse.c \
	src/reducer_sparcml.c \
	src/reducer_parallax.c \
	src/reducer_omnireduce.c \
	src/reducer_oktopk.c \
	src/reducer_zen.c \
	src/reducer_s2.c \
	src/reducer_gossip.c
