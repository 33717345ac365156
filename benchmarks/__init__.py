"""Product benchmarks (run as scripts or ``python -m benchmarks.NAME``); see README.md here."""
