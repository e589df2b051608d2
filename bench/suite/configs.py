"""How a workload is run under each configuration.

memloupe is driven through its preload library and environment variables
(MEMLOUPE_OUTPUT, MEMLOUPE_MODE) — what `memloupe run` sets up — so that the timed run is
the target alone; the launcher's finalise step (symbolise + embed) is timed separately
afterwards. heaptrack is timed as users run it: its script, the target and its
concurrent interpreter together; so is `memloupe run --all` ("run-all": the launcher,
the target, the finaliser that follows the trace while it runs, and what is left of
the finalise after the target exits, in one command).
"""
import dataclasses
import os

NOT_BUILT = "n/a (not built)"


@dataclasses.dataclass(frozen=True)
class Config:
    key: str
    label: str
    trace_suffix: str | None  # None: writes no trace

    def unavailable(self, tools):
        """Why this configuration cannot run here, or None."""
        if self.key in tools.skipped:
            return f"n/a (skipped: --no-{self.key})"
        if self.key in ("sampled", "all"):
            return None if tools.preload else NOT_BUILT
        if self.key == "run-all":
            return None if tools.preload and tools.has("run") else NOT_BUILT
        if self.key == "heaptrack":
            return None if tools.heaptrack else "n/a (heaptrack not installed)"
        if self.key == "massif":
            return None if tools.valgrind else "n/a (valgrind not installed)"
        return None

    def command(self, workload, tools, trace_path):
        """(argv, environment) for one run writing its trace to trace_path."""
        argv = list(workload.argv)
        # Variables meant for the target go through env(1), which execs it: set on the
        # measuring wrapper itself, LD_PRELOAD would trace the wrapper and leave its
        # forked child (the target) untraced. Native runs take the same path.
        if self.key == "native":
            return ["env", *argv], workload.environ()
        if self.key in ("sampled", "all"):
            return ["env", f"LD_PRELOAD={tools.preload}", f"MEMLOUPE_OUTPUT={trace_path}",
                    f"MEMLOUPE_MODE={self.key}", *argv], workload.environ()
        if self.key == "run-all":
            return [tools.memloupe, "run", "--all", "-o", trace_path, "--", *argv], workload.environ()
        if self.key == "heaptrack":
            # heaptrack appends ".zst" to the -o name.
            base = trace_path[: -len(".zst")]
            return [tools.heaptrack, "-o", base, *argv], workload.environ()
        if self.key == "massif":
            return [tools.valgrind, "--tool=massif", f"--massif-out-file={trace_path}",
                    *argv], workload.environ()
        raise KeyError(self.key)


NATIVE = Config("native", "native", None)
SAMPLED = Config("sampled", "memloupe sampled", ".trace")
ALL = Config("all", "memloupe --all", ".trace")
RUN_ALL = Config("run-all", "memloupe run --all", ".trace")
HEAPTRACK = Config("heaptrack", "heaptrack", ".zst")
MASSIF = Config("massif", "valgrind massif", ".massif")

MAIN_CONFIGS = (NATIVE, SAMPLED, ALL, RUN_ALL, HEAPTRACK)
MASSIF_CONFIGS = (NATIVE, MASSIF)


def trace_path(trace_dir, workload_key, config, run_index):
    if config.trace_suffix is None:
        return None
    return os.path.join(trace_dir, f"{workload_key}.{config.key}.{run_index}{config.trace_suffix}")
