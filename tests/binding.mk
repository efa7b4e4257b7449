# libreducer outside the tree: the installed shared library through
# pkg-config, and the Python binding on 2 ranks.
TESTS += tests/lib/shared_install.sh tests/lib/python_binding.sh
dist_check_SCRIPTS += tests/lib/shared_install.sh tests/lib/python_binding.sh tests/lib/binding_checks.py
dist_check_DATA += tests/lib/pkgconfig_user.c
