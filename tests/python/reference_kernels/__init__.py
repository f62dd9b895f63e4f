"""The reference kernels' correctness tests, one module per op (a package, so that its conftest and
helpers do not shadow tests/python's own conftest)."""
