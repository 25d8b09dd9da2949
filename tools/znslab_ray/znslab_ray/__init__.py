"""znslab's runs as Ray tasks: a run list (`znslab reproduce PAPER --write-runs`) spread over a
Ray cluster, one task per run, each calling the `znslab` binary on its worker; the results land
in the same folder layout as the local executor's, and the report is made by the binary
(`--report-only`), so both executors give the same report."""

from .sweep import reproduce, run_list

__all__ = ["reproduce", "run_list"]
