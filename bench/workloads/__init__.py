"""The workloads: each module's ``cases(libs, quick)`` builds its ``bench.harness.Case`` rows."""
