"""What the suite asks memloupe's and heaptrack's own commands, and how it reads their
answers. Parsers are tolerant: a figure that cannot be found is None (shown as n/a),
never a guess."""
import csv
import io
import os
import re

from . import runner


def _run(argv, timeout_s=600.0):
    m = runner.run(argv, timeout_s=timeout_s)
    return m if m.ok else None


def _number(text):
    return int(text.replace(",", "").replace("_", ""))


def _find_int(text, patterns):
    for pattern in patterns:
        m = re.search(pattern, text, re.IGNORECASE | re.MULTILINE)
        if m:
            return _number(m.group(1))
    return None


def finalise(tools, trace):
    """Symbolises and embeds, as `memloupe run` does after the program exits. Returns
    the Measurement, or None when this build has no `symbolize` command."""
    if not tools.has("symbolize"):
        return None
    return runner.run([tools.memloupe, "symbolize", trace])


def span_ns(tools, trace):
    """(start_wall_ns, duration_ns) of the program in its trace (`memloupe summary
    --json`): its CLOCK_REALTIME at the trace's first clock, and how long it ran from
    there to the trace's end. None if either is missing."""
    if not tools.has("summary"):
        return None
    m = _run([tools.memloupe, "summary", "--json", trace])
    if not m:
        return None
    start = re.search(r'"start_wall_ns":\s*(\d+)', m.stdout)
    duration = re.search(r'"duration_ns":\s*(\d+)', m.stdout)
    return (int(start.group(1)), int(duration.group(1))) if start and duration else None


def info(tools, trace):
    """From `memloupe info`: 'samples', its per-kind event count "  alloc   N" (in a
    sampled trace, one Alloc event per sampled block), and 'every', the mean bytes
    between samples ("one sample per N bytes on average")."""
    if not tools.has("info"):
        return {}
    m = _run([tools.memloupe, "info", trace])
    if m is None:
        return {}
    return {"samples": _find_int(m.stdout, [r"^\s+alloc\s+([\d,_]+)\s*$"]),
            "every": _find_int(m.stdout, [r"one sample per ([\d,_]+) bytes"])}


def summary_calls(tools, trace):
    """Total allocation calls from `memloupe summary` (its exact per-function totals)."""
    if not tools.has("summary"):
        return None
    m = _run([tools.memloupe, "summary", trace])
    if m is None:
        return None
    # "Total        599,592 allocating calls, 82.6 MiB requested"
    return _find_int(m.stdout, [r"^Total\s+([\d,_]+) allocating calls"])


def heaptrack_facts(tools, zst):
    """heaptrack_print's 'calls to allocation functions: N' and 'peak RSS (including
    heaptrack overhead): X' (the target's RSS, which ru_maxrss cannot isolate)."""
    if not tools.heaptrack_print or not os.path.exists(zst):
        return {}
    m = _run([tools.heaptrack_print, "-f", zst])
    if m is None:
        return {}
    rss = re.search(r"peak RSS \(including heaptrack overhead\):\s*([\d.]+)([KMG]?)", m.stdout)
    # heaptrack_print's units are decimal: 10,000,000 bytes print as "10.00M".
    scale = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}
    return {
        "calls": _find_int(m.stdout, [r"calls to allocation functions:\s*([\d,_]+)"]),
        "target_rss_kib": float(rss.group(1)) * scale[rss.group(2)] / 1024 if rss else None,
    }


def top_sites(tools, trace):
    """Every row of `memloupe top --csv -n 0` (sites by allocated bytes, whole stacks)
    as dicts, or None."""
    if not tools.has("top"):
        return None
    m = _run([tools.memloupe, "top", "--csv", "-n", "0", trace])
    if m is None or not m.stdout.strip():
        return None
    return list(csv.DictReader(io.StringIO(m.stdout)))
