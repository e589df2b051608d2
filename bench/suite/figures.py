"""Figures derived from the raw runs: medians, paired ratios, bytes per event, and the
targets of issue 5. Rendering is in report.py; this module only computes."""
import dataclasses

from .stats import median, paired_ratio

@dataclasses.dataclass
class Row:
    """One workload under one configuration."""
    status: str
    wall_s: float | None = None
    cpu_s: float | None = None
    rss_kib: float | None = None
    x_native: float | None = None
    x_native_cpu: float | None = None
    x_heaptrack: float | None = None
    finalise_s: float | None = None
    # (wall + finalise) over heaptrack's wall: what a user waits for end to end,
    # since heaptrack's own figure includes its interpreter.
    x_heaptrack_finalised: float | None = None
    outputs_same: int = 0
    outputs_total: int = 0
    # What the user waits for: from pressing enter to the finalised trace (the run,
    # then its finalise), medians over runs; its CPU time likewise; paired ratios to
    # the same round's native run and heaptrack's whole run; the finalise alone over
    # the native run (the part that could overlap the program).
    wait_s: float | None = None
    wait_cpu_s: float | None = None
    wait_x_native: float | None = None
    wait_cpu_x_heaptrack: float | None = None
    finalise_x_native: float | None = None
    # run-all: the wall after the program's exit (from the trace's end) over the native
    # run, paired; and the wall less the program's duration (measure.RunRecord).
    after_exit_x_native: float | None = None
    wall_less_duration_s: float | None = None


def _ok(runs, field):
    """Per-run values of `field`, None for failed runs (keeps runs aligned for pairing)."""
    return [getattr(r, field) if r.exit_code == 0 else None for r in runs]


def _finalised(runs, field="wall_s", finalise_field="finalise_s"):
    """Per-run time (wall, or CPU) plus the finalise's (None where either is missing)."""
    return [w + getattr(r, finalise_field) if w is not None and getattr(r, finalise_field, None) is not None
            else None for w, r in zip(_ok(runs, field), runs)]


def row(result, key):
    cr = result.configs.get(key)
    if cr is None or not cr.runs:
        return Row(status=cr.status if cr else "n/a")
    native = result.configs["native"].runs
    ht = result.configs.get("heaptrack")
    ht_runs = ht.runs if ht and ht.runs else []
    runs = cr.runs
    if key == "run-all":
        # `memloupe run --all` as the user runs it: its wall and CPU are the whole wait;
        # its "finalise" is what is left after the program's exit.
        waits, waits_cpu = _ok(runs, "wall_s"), _ok(runs, "cpu_s")
        after = [r.after_exit_s if r.exit_code == 0 else None for r in runs]
        return Row(
            status=cr.status,
            wall_s=median(waits),
            cpu_s=median(waits_cpu),
            rss_kib=median(_ok(runs, "maxrss_kib")),
            x_native=paired_ratio(waits, _ok(native, "wall_s")),
            x_native_cpu=paired_ratio(waits_cpu, _ok(native, "cpu_s")),
            x_heaptrack=paired_ratio(waits, _ok(ht_runs, "wall_s")) if ht_runs else None,
            finalise_s=median(after),
            x_heaptrack_finalised=paired_ratio(waits, _ok(ht_runs, "wall_s")) if ht_runs else None,
            outputs_same=sum(r.same_output for r in runs),
            outputs_total=len(runs),
            wait_s=median(waits),
            wait_cpu_s=median(waits_cpu),
            wait_x_native=paired_ratio(waits, _ok(native, "wall_s")),
            wait_cpu_x_heaptrack=paired_ratio(waits_cpu, _ok(ht_runs, "cpu_s")) if ht_runs else None,
            finalise_x_native=paired_ratio(after, _ok(native, "wall_s")),
            after_exit_x_native=paired_ratio(after, _ok(native, "wall_s")),
            wall_less_duration_s=median(r.wall_less_duration_s if r.exit_code == 0 else None for r in runs),
        )
    return Row(
        status=cr.status,
        wall_s=median(_ok(runs, "wall_s")),
        cpu_s=median(_ok(runs, "cpu_s")),
        rss_kib=median(_ok(runs, "maxrss_kib")),
        x_native=paired_ratio(_ok(runs, "wall_s"), _ok(native, "wall_s")),
        x_native_cpu=paired_ratio(_ok(runs, "cpu_s"), _ok(native, "cpu_s")),
        x_heaptrack=(paired_ratio(_ok(runs, "wall_s"), _ok(ht_runs, "wall_s"))
                     if ht_runs else None),
        finalise_s=median(r.finalise_s for r in runs),
        x_heaptrack_finalised=(paired_ratio(_finalised(runs), _ok(ht_runs, "wall_s"))
                               if ht_runs else None),
        outputs_same=sum(r.same_output for r in runs),
        outputs_total=len(runs),
        wait_s=median(_finalised(runs)),
        wait_cpu_s=median(_finalised(runs, "cpu_s", "finalise_cpu_s")),
        wait_x_native=paired_ratio(_finalised(runs), _ok(native, "wall_s")),
        wait_cpu_x_heaptrack=(paired_ratio(_finalised(runs, "cpu_s", "finalise_cpu_s"), _ok(ht_runs, "cpu_s"))
                              if ht_runs else None),
        finalise_x_native=paired_ratio([r.finalise_s for r in runs], _ok(native, "wall_s")),
    )


def calls(result, tool="memloupe"):
    """Allocation calls to divide `tool`'s trace size by: its own count (`memloupe
    summary` or heaptrack_print), else the workload's own count (alloc_mt prints it)."""
    counted = result.memloupe_calls if tool == "memloupe" else result.heaptrack_calls
    return counted or result.own_calls


def trace_bytes(cr, runs="last"):
    """(recorded, finalised, bound) bytes of the last run's trace, or with runs="median"
    the median over the runs of each. A threaded program's trace size follows how its
    threads interleaved (in one suite heaptrack's file of (d) was 1.46, 1.54 and 0.54
    MB, ours 1.06-1.14 MB), so the --all sizes set against heaptrack's are medians
    (they were the last run's until 2026-11-26's seventh round); a sampled trace's
    bytes go with that run's own samples, so those stay the last run's. `recorded` is the file
    as the preload library left it (the events, zstd-compressed by its flush thread
    since issue 13's round; uncompressed before); `finalised` is after `memloupe
    symbolize` (plus the symbols, the analysis index, the types and the snapshots'
    annex): the file the user keeps. The smaller bounds the "symbols excluded" size
    issue 5's target speaks of; issue 13's compares the finalised file."""
    if cr is None or not cr.runs:
        return None, None, None
    chosen = cr.runs[-1:] if runs == "last" else cr.runs
    recorded = _median_int(r.trace_bytes for r in chosen)
    finalised = _median_int(r.final_bytes for r in chosen)
    sizes = [b for b in (recorded, finalised) if b]
    return recorded, finalised, min(sizes) if sizes else None


def _median_int(values):
    m = median(values)
    return None if m is None else int(m)


def per(numerator, denominator):
    return numerator / denominator if numerator is not None and denominator else None


def marginal_bytes_per_sample(cr):
    """(recorded bytes at full size - at the small size) / (samples at full - at small):
    what one more sampled allocation (its alloc event with backtrace, and its free)
    costs, the fixed bytes of a trace (header, module map, thread events, RSS samples)
    cancelling out. Recorded (uncompressed, symbol-free) bytes on both sides. None if
    the larger run has no more samples than the smaller."""
    if cr is None or not cr.runs or cr.small_bytes is None or cr.small_samples is None:
        return None
    full, samples = cr.runs[-1].trace_bytes, cr.samples
    if full is None or samples is None or samples <= cr.small_samples:
        return None
    return (full - cr.small_bytes) / (samples - cr.small_samples)


def recorder_memory_mib(result):
    """Sampled-mode peak RSS minus native peak RSS (medians)."""
    s, n = row(result, "sampled"), row(result, "native")
    if s.rss_kib is None or n.rss_kib is None:
        return None
    return (s.rss_kib - n.rss_kib) / 1024


@dataclasses.dataclass
class Target:
    name: str
    measured: str
    met: bool | None  # None: could not be measured


# The analysis timings that measure the finalise step (the index's cost), not a
# question answered: not compared with heaptrack_print.
FINALISE = "memloupe symbolize --force"


def analysis_ratio(analysis, name):
    """How many times faster `name` is than heaptrack_print (median times)."""
    mine = median(analysis["times"].get(name, []))
    theirs = median(analysis["times"].get("heaptrack_print", []))
    return theirs / mine if mine and theirs else None
