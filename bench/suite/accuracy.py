"""Accuracy: the largest sites of the --all trace (exact) against the sampled trace's
estimates and 95% intervals, both from `memloupe top --csv` (sites are whole
stacks, innermost first, keyed by their text).

A site that got no sample does not appear in the sampled trace's table. Its estimate
is 0 and its 95% interval is [0, -ln(0.025) * every]: the exact (Garwood) bound for a
Poisson count of zero, the largest byte total B for which P(no sample) = e^(-B/every)
is still >= 2.5%.

Each interval has 95% coverage, so among 10 sites one miss is expected about 40% of
the time with correct intervals; the table shows every site, so a miss can be judged,
and `coverage` checks the intervals over every sampled run of the suite (each an
independent recording, so a run's misses say little, their rate over the runs more)."""
import math

from . import memloupe_cli

SITE, BYTES, LO, HI = ("stack_innermost_first", "allocated_bytes", "allocated_bytes_lo",
                       "allocated_bytes_hi")


def _int(text):
    try:
        return int(float(text))
    except (TypeError, ValueError):
        return None


def compare(tools, sampled_trace, all_trace, every, limit=10):
    if not sampled_trace or not all_trace:
        return {"status": "n/a (no sampled or --all trace)"}
    exact_rows = memloupe_cli.top_sites(tools, all_trace)
    sampled_rows = memloupe_cli.top_sites(tools, sampled_trace)
    if not exact_rows or sampled_rows is None:
        return {"status": "n/a (`memloupe top --csv` not built or failed)"}
    missing = {SITE, BYTES, LO, HI} - set(exact_rows[0])
    if missing:
        return {"status": f"n/a (`memloupe top --csv` lacks {', '.join(sorted(missing))})"}
    if not every:
        return {"status": "n/a (sampling rate unknown: `memloupe info` did not say)"}
    estimates = {row[SITE]: row for row in sampled_rows}
    unsampled_hi = -math.log(0.025) * every
    sites = []
    for row in exact_rows[:limit]:
        exact = _int(row[BYTES])
        est = estimates.get(row[SITE])
        if est is None:
            value, lo, hi = 0, 0, int(unsampled_hi)
        else:
            value, lo, hi = _int(est[BYTES]), _int(est[LO]), _int(est[HI])
        sites.append({"name": _short(row[SITE]), "exact": exact, "estimate": value,
                      "lo": lo, "hi": hi, "sampled": est is not None,
                      "inside": None not in (exact, lo, hi) and lo <= exact <= hi})
    return {"status": "ok", "every": every, "sites": sites}


def coverage(tools, sampled_traces, all_trace, every, limit=10):
    """(inside, compared) over the top `limit` sites of each sampled trace against the
    one --all trace, or None if no comparison could be made."""
    inside = compared = 0
    for trace in sampled_traces:
        result = compare(tools, trace, all_trace, every, limit)
        sites = result.get("sites") or []
        inside += sum(s["inside"] for s in sites)
        compared += len(sites)
    return (inside, compared) if compared else None


def _short(stack, frames=3, width=90):
    """The innermost frames of a site, for the table."""
    parts = stack.split(";")
    text = " ← ".join(parts[:frames]) + (" ← …" if len(parts) > frames else "")
    return text if len(text) <= width else text[: width - 1] + "…"
