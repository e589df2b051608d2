"""The benchmark suite behind bench/run_suite.py (standard library only)."""
