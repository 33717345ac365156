"""The short solver schedules of the test suite: two, defined once (issue 39).

Tests compare the library with itself (a page with the library, a CLI with the estimator), not
with the paper, so they run short schedules:

* :data:`QUICK`: four stages, 5,000 iterations in all, for page, manifest and prior-knowledge
  tests, where a fit must still find Sachs' strong edges;
* :data:`TINY`: four stages, 1,000 iterations, for contract tests (shapes, warnings, stops,
  clone, refusals) where the graph does not matter.

A test that needs another schedule (a stage count, a checkpoint grid) says why beside it.
The ``quick`` and ``tiny`` fixtures of ``tests/conftest.py`` hand out copies.
"""
from types import MappingProxyType

QUICK = MappingProxyType({"max_iter": (1000, 1000, 1000, 2000), "checkpoint": 200})
TINY = MappingProxyType({"max_iter": (200, 200, 200, 400), "checkpoint": 50})
