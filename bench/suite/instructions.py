"""Instruction counts under valgrind callgrind: native, memloupe sampled and --all.

Wall time on a shared machine varies by tens of percent from run to run, far more than
the few percent the sampled mode is allowed to cost, and hardware counters are often
unavailable in VMs. Callgrind counts executed instructions (the program's, every
thread's, serialised by valgrind): the same on every run apart from thread interleaving,
so one run per configuration is enough. It is a proxy: it does not see cache misses,
lock contention or system-call time. heaptrack cannot run under callgrind, so it is
not in this table.

Under valgrind the preload library is also loaded into valgrind's own launcher, whose
exec would end the trace and drop MEMLOUPE_OUTPUT. The variables therefore go into
valgrind's environment with MEMLOUPE_FOLLOW_FORK=1 (docs/RECORDER.md, "Costs in --all
mode"): each exec then writes its own trace, PATH, PATH.1, ..., and the program's is
the last one.
"""
import dataclasses
import os
import re

from . import memloupe_cli, runner, workloads

CONFIG_KEYS = ("native", "sampled", "all")


@dataclasses.dataclass
class CountResult:
    status: str = "ok"  # or why there is no figure
    instructions: int | None = None
    same_output: bool = False  # the checksum line equals the native callgrind run's
    samples: int | None = None  # `alloc` events in the program's trace (memloupe only)
    # `memloupe symbolize` of the program's trace (--all only): the finalise step's
    # instructions, every thread's, beside the recording's.
    finalise_instructions: int | None = None


@dataclasses.dataclass
class WorkloadCounts:
    workload: workloads.Workload
    counts: dict  # config key -> CountResult

    def ratio(self, key):
        native = self.counts["native"].instructions
        mine = self.counts[key].instructions
        return mine / native if mine and native else None


def unavailable(tools):
    if "callgrind" in tools.skipped:
        return "n/a (skipped: --no-callgrind)"
    if not tools.valgrind:
        return "n/a (valgrind not installed)"
    return None


def _summary(path):
    """The `summary:` line of a callgrind output file (total Ir of all threads)."""
    if not os.path.exists(path):
        return None
    with open(path, errors="replace") as f:
        m = re.search(r"^summary:\s*(\d+)", f.read(), re.MULTILINE)
    return int(m.group(1)) if m else None


def _chain(path):
    """The traces PATH, PATH.1, PATH.2, ... that exist; the last is the program's (the
    ones before it are valgrind's launcher stages)."""
    out = [path] if os.path.exists(path) else []
    n = 1
    while os.path.exists(f"{path}.{n}"):
        out.append(f"{path}.{n}")
        n += 1
    return out


def _count(wl, key, tools, trace_dir, reference):
    out = os.path.join(trace_dir, f"{wl.key}.{key}.callgrind")
    trace = os.path.join(trace_dir, f"{wl.key}.{key}.callgrind.trace")
    extra = ()
    if key != "native":
        extra = (("LD_PRELOAD", tools.preload), ("MEMLOUPE_OUTPUT", trace),
                 ("MEMLOUPE_MODE", key), ("MEMLOUPE_FOLLOW_FORK", "1"))
    argv = [tools.valgrind, "--tool=callgrind", "--dump-instr=no",
            f"--callgrind-out-file={out}", *wl.argv]
    m = runner.run(argv, env=wl.environ(extra), stdin_path=wl.stdin, timeout_s=3600)
    res = CountResult(instructions=_summary(out))
    line = wl.checksum(m.stdout)
    res.same_output = line is not None and line == (reference or line)
    if not m.ok or res.instructions is None:
        res.status = f"failed: exit {m.exit_code}"
    elif key != "native":
        chain = _chain(trace)
        facts = memloupe_cli.info(tools, chain[-1]) if chain else {}
        res.samples = facts.get("samples")
        # A run that recorded nothing would make the recorder look free.
        if not res.samples:
            res.status = "failed: the program's trace holds no alloc event"
        elif key == "all" and tools.has("symbolize"):
            res.finalise_instructions = _finalise_count(tools, chain[-1], out + ".finalise")
    for path in [out, *_chain(trace)]:
        os.remove(path)
    return res, line


def _finalise_count(tools, trace, out):
    """Instructions of `memloupe symbolize TRACE` (in place) under callgrind, or None."""
    argv = [tools.valgrind, "--tool=callgrind", "--dump-instr=no",
            f"--callgrind-out-file={out}", tools.memloupe, "symbolize", trace]
    m = runner.run(argv, timeout_s=3600)
    count = _summary(out) if m.ok else None
    if os.path.exists(out):
        os.remove(out)
    return count


def measure(wls, tools, trace_dir, log):
    """One callgrind run per workload and configuration (workloads at the sizes given)."""
    results = []
    for wl in wls:
        wc = WorkloadCounts(wl, {})
        reference = None
        for key in CONFIG_KEYS:
            if key != "native" and not tools.preload:
                wc.counts[key] = CountResult(status="n/a (not built)")
                continue
            res, line = _count(wl, key, tools, trace_dir, reference)
            if key == "native":
                reference = line
            wc.counts[key] = res
            log(f"    {wl.key:9} callgrind {key:8} {res.instructions or 0:>15,} instructions"
                + ("" if res.status == "ok" else f"  {res.status}")
                + ("" if res.same_output else "  OUTPUT DIFFERS")
                + (f"; finalise {res.finalise_instructions:,}" if res.finalise_instructions else ""))
        results.append(wc)
    return results
