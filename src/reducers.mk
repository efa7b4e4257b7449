# Made by src/reducers-mk from src/reducers.def (the registry): do not edit.
REDUCER_SOURCES = \
	src/reducer_none.c \
	src/reducer_dense.c \
	src/reducer_dense.h \
	src/reducer_agsparse.c \
	src/reducer_agsparse.h \
	src/reducer_sparcml.c \
	src/reducer_sparcml.h \
	src/reducer_parallax.c \
	src/reducer_parallax.h \
	src/reducer_omnireduce.c \
	src/reducer_omnireduce.h \
	src/reducer_oktopk.c \
	src/reducer_zen.c \
	src/reducer_s2.c \
	src/reducer_s2.h \
	src/reducer_gossip.c
REDUCER_NCCL_SOURCES = \
	src/cuda/dense_nccl.c \
	src/cuda/agsparse_nccl.c \
	src/cuda/sparcml_nccl.c \
	src/cuda/parallax_nccl.c \
	src/cuda/omnireduce_nccl.c \
	src/cuda/s2_nccl.c
