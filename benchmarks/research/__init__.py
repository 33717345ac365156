"""One-off research probes of the fast solver (``python -m benchmarks.research.NAME``); see ../README.md."""
