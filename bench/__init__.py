"""ember's benchmark suite: run it with ``python bench/run.py`` (see ``BENCHMARKS.md``)."""
