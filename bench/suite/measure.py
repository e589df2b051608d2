"""The measurement plan: every workload under every configuration, run after run.

Runs are interleaved — run i of every configuration before run i+1 of any — and the
order of configurations rotates from run to run, so a change in the machine's load
falls on all of them alike. Only the last run's traces are kept (for the trace-size and
analysis figures), and every sampled run's (small; the accuracy figures compare each
with the last --all trace); the others are deleted once measured.
"""
import dataclasses
import os
import sys
import time

from . import configs, figures, memloupe_cli, runner, workloads


@dataclasses.dataclass
class RunRecord:
    wall_s: float
    cpu_s: float
    maxrss_kib: int
    exit_code: int
    same_output: bool  # the checksum line equals the native run's
    trace_bytes: int | None = None  # as the run left it
    final_bytes: int | None = None  # after finalise
    finalise_s: float | None = None
    finalise_cpu_s: float | None = None
    # run-all only (its wall already holds the finalise): the program's own duration in
    # its trace; the wait after the trace's end (its start_wall_ns + duration_ns) to
    # memloupe's reaping, on CLOCK_REALTIME: what is left of the finalise once the
    # program exits; and the wall less the duration, which also holds what runs before
    # the trace's first clock (memloupe's own start, the fork and exec: ~4-8 ms), the
    # figure until 2026-11-26's seventh round.
    program_s: float | None = None
    after_exit_s: float | None = None
    wall_less_duration_s: float | None = None


@dataclasses.dataclass
class ConfigResult:
    status: str = "ok"  # or why it did not run ("n/a (not built)", "failed: ...")
    runs: list = dataclasses.field(default_factory=list)
    last_trace: str | None = None
    sampled_traces: list = dataclasses.field(default_factory=list)  # every run's, sampled only
    samples: int | None = None  # memloupe info, last trace
    every: int | None = None  # mean bytes between samples, memloupe info
    # One more sampled recording at a smaller size (record_small_sampled), so that the
    # fixed bytes of a trace (header, modules, threads, RSS) cancel out of the
    # per-sample cost: size, recorded bytes, alloc events.
    small_size: int | None = None
    small_bytes: int | None = None
    small_samples: int | None = None


@dataclasses.dataclass
class WorkloadResult:
    workload: workloads.Workload
    configs: dict  # config key -> ConfigResult
    reference_output: str | None = None  # the first native run's checksum line
    own_calls: int | None = None
    memloupe_calls: int | None = None  # `memloupe summary` on the --all trace
    heaptrack_calls: int | None = None  # heaptrack_print on heaptrack's trace
    heaptrack_target_rss_kib: float | None = None  # the target's, as heaptrack_print says


def log(message):
    print(message, file=sys.stderr, flush=True)


def _rotate(items, k):
    k %= len(items)
    return items[k:] + items[:k]


def _file_size(path):
    return os.path.getsize(path) if path and os.path.exists(path) else None


def _remove(path):
    if path and os.path.exists(path):
        os.remove(path)


def _one_run(result, config, tools, trace_dir, run_index, keep):
    wl = result.workload
    cr = result.configs[config.key]
    path = configs.trace_path(trace_dir, wl.key, config, run_index)
    argv, env = config.command(wl, tools, path)
    m = runner.run(argv, env=env, stdin_path=wl.stdin)
    line = wl.checksum(m.stdout)
    if config.key == "native" and result.reference_output is None:
        result.reference_output = line
        result.own_calls = workloads.own_call_count(m.stdout)
    if not m.ok:
        cr.status = f"failed: exit {m.exit_code}"
        log(f"    {config.label} failed (exit {m.exit_code}): {m.stderr_tail[-400:]}")
    rec = RunRecord(m.wall_s, m.cpu_s, m.maxrss_kib, m.exit_code,
                    same_output=line is not None and line == result.reference_output,
                    trace_bytes=_file_size(path))
    if config.key == "run-all" and m.ok and rec.trace_bytes:
        rec.final_bytes = rec.trace_bytes
        span = memloupe_cli.span_ns(tools, path)
        if span is not None:
            start_ns, duration_ns = span
            rec.program_s = duration_ns / 1e9
            rec.wall_less_duration_s = max(0.0, m.wall_s - rec.program_s)
            if m.end_realtime_ns is not None:
                rec.after_exit_s = max(0.0, (m.end_realtime_ns - start_ns - duration_ns) / 1e9)
    if config.key in ("sampled", "all") and m.ok and rec.trace_bytes:
        fin = memloupe_cli.finalise(tools, path)
        if fin is not None and fin.ok:
            rec.finalise_s = fin.wall_s
            rec.finalise_cpu_s = fin.cpu_s
            rec.final_bytes = _file_size(path)
    cr.runs.append(rec)
    log(f"    {wl.key:9} {config.label:17} {m.wall_s:7.3f} s  cpu {m.cpu_s:7.3f} s  "
        f"rss {m.maxrss_kib / 1024:7.1f} MiB" + ("" if rec.same_output else "  OUTPUT DIFFERS"))
    if config.key == "sampled":  # kept whatever the run: removed with the directory
        if rec.final_bytes:
            cr.sampled_traces.append(path)
        if keep:
            cr.last_trace = path
    elif keep:
        _remove(cr.last_trace)
        cr.last_trace = path
    else:
        _remove(path)


def measure(wls, config_list, tools, trace_dir, runs, label=""):
    results = [WorkloadResult(wl, {c.key: ConfigResult() for c in config_list}) for wl in wls]
    for result in results:
        for c in config_list:
            reason = c.unavailable(tools)
            if reason:
                result.configs[c.key].status = reason
    for i in range(runs):
        log(f"[{label}run {i + 1}/{runs}]")
        for result in results:
            # native always first in a run: it sets the reference output.
            order = [config_list[0]] + _rotate(list(config_list[1:]), i)
            for c in order:
                if result.configs[c.key].status.startswith("n/a"):
                    continue
                _one_run(result, c, tools, trace_dir, i, keep=(i == runs - 1))
    return results


def inspect_traces(results, tools):
    """Figures read back from the last run's traces."""
    for r in results:
        for key in ("sampled", "all"):
            cr = r.configs.get(key)
            if cr and cr.last_trace:
                facts = memloupe_cli.info(tools, cr.last_trace)
                cr.samples = facts.get("samples")
                cr.every = facts.get("every")
        if r.configs.get("all") and r.configs["all"].last_trace:
            r.memloupe_calls = memloupe_cli.summary_calls(tools, r.configs["all"].last_trace)
        if r.configs.get("heaptrack") and r.configs["heaptrack"].last_trace:
            facts = memloupe_cli.heaptrack_facts(tools, r.configs["heaptrack"].last_trace)
            r.heaptrack_calls = facts.get("calls")
            r.heaptrack_target_rss_kib = facts.get("target_rss_kib")


def record_small_sampled(results, small_wls, tools, trace_dir):
    """Records each workload once more in sampled mode at the smaller size in
    `small_wls` (key -> Workload): the recorded bytes and alloc events it gives."""
    for r in results:
        cr = r.configs.get("sampled")
        wl = small_wls.get(r.workload.key)
        if cr is None or wl is None or cr.status != "ok":
            continue
        path = configs.trace_path(trace_dir, wl.key + "-small", configs.SAMPLED, 0)
        argv, env = configs.SAMPLED.command(wl, tools, path)
        m = runner.run(argv, env=env, stdin_path=wl.stdin)
        if m.ok and _file_size(path):
            cr.small_size = wl.size
            cr.small_bytes = _file_size(path)
            cr.small_samples = memloupe_cli.info(tools, path).get("samples")
            log(f"    {wl.key:9} sampled at size {wl.size}: {cr.small_bytes} B, "
                f"{cr.small_samples} samples")
        else:
            log(f"    {wl.key:9} sampled at size {wl.size} failed (exit {m.exit_code})")
        _remove(path)


def measure_analysis(result, tools, trace_dir, runs):
    """`memloupe summary` and `memloupe report` on (a)'s --all trace, from its
    analysis index and (--no-index) from its events, against heaptrack_print on
    (a)'s heaptrack trace; and what the index costs the finalise step
    (`memloupe symbolize --force` into a copy, with and without --no-index).
    Interleaved, `runs` times each."""
    all_trace = result.configs["all"].last_trace if "all" in result.configs else None
    ht_trace = result.configs["heaptrack"].last_trace if "heaptrack" in result.configs else None
    html = os.path.join(trace_dir, "report.html")
    refinalised = os.path.join(trace_dir, "refinalised.trace")

    def view(command, *extra):
        return ([tools.memloupe, command, *extra, all_trace]
                if all_trace and tools.has(command) else None)

    plan = {
        "memloupe summary": view("summary"),
        "memloupe summary --no-index": view("summary", "--no-index"),
        "memloupe report": view("report", "-o", html),
        "memloupe report --no-index": view("report", "--no-index", "-o", html),
        "heaptrack_print": ([tools.heaptrack_print, "-f", ht_trace]
                            if ht_trace and tools.heaptrack_print else None),
        figures.FINALISE + " (with index)": view("symbolize", "--force", "-o", refinalised),
        figures.FINALISE + " --no-index": view("symbolize", "--force", "--no-index", "-o", refinalised),
    }
    times = {name: [] for name in plan}
    for i in range(runs):
        log(f"[analysis run {i + 1}/{runs}]")
        for name, argv in plan.items():
            if argv is None:
                continue
            m = runner.run(argv)
            times[name].append(m.wall_s if m.ok else None)
            log(f"    {name:17} {m.wall_s:7.3f} s" + ("" if m.ok else f"  failed ({m.exit_code})"))
    html_bytes = _file_size(html)
    _remove(html)
    _remove(refinalised)
    return {"times": times, "report_html_bytes": html_bytes,
            "missing": [name for name, argv in plan.items() if argv is None]}


def timer():
    start = time.perf_counter()
    return lambda: time.perf_counter() - start
