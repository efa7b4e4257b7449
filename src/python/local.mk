# The Python binding of libreducer: the extension module _rbreducer (the
# library, position-independent, inside it: importing it needs no
# LD_LIBRARY_PATH) and the package rbreducer over it, installed where
# configure's Python looks (pythondir, pyexecdir).  In the build tree:
# PYTHONPATH=$(srcdir)/src/python:src/python/.libs.
EXTRA_DIST += src/python/_rbreducer.c src/python/rbreducer/__init__.py
if HAVE_PYTHON
pyexec_LTLIBRARIES += src/python/_rbreducer.la
src_python__rbreducer_la_SOURCES = src/python/_rbreducer.c
src_python__rbreducer_la_CPPFLAGS = $(AM_CPPFLAGS) $(PYTHON_CPPFLAGS)
src_python__rbreducer_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
src_python__rbreducer_la_LDFLAGS = -module -avoid-version -shared -no-undefined \
	-export-symbols-regex '^PyInit__rbreducer$$'
src_python__rbreducer_la_LIBADD = src/libreducer_pic.la $(CUDA_LIBS) $(NCCL_LIBS) -lm
rbreducerdir = $(pythondir)/rbreducer
rbreducer_PYTHON = src/python/rbreducer/__init__.py
endif
