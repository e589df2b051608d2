"""Accuracy: the largest sites of the --all trace (exact figures) against the sampled
trace's estimates and their 95% intervals, both from `memloupe top --csv`.

Columns are found by name so that the table survives small changes to the CSV: a site
column (site/function/location/name/stack), an allocated-bytes column, and the interval
columns (names ending in lo/low/lower and hi/high/upper)."""
from . import memloupe_cli


def _pick(columns, *candidates, suffixes=()):
    for c in candidates:
        if c in columns:
            return c
    for col in columns:
        if any(col.endswith(s) for s in suffixes):
            return col
    return None


def _int(text):
    try:
        return int(float(text.replace(",", "")))
    except (ValueError, AttributeError):
        return None


def compare(tools, sampled_trace, all_trace, limit=10):
    if not sampled_trace or not all_trace:
        return {"status": "n/a (no sampled or --all trace)"}
    exact_rows = memloupe_cli.top_sites(tools, all_trace, limit=1000)
    sampled_rows = memloupe_cli.top_sites(tools, sampled_trace, limit=1000)
    if not exact_rows or not sampled_rows:
        return {"status": "n/a (`memloupe top --csv` not built)"}
    columns = list(exact_rows[0].keys())
    site = _pick(columns, "site", "function", "location", "name", "stack", "backtrace")
    value = _pick(columns, "allocated_bytes", "alloc_bytes", "bytes", "allocated", "size")
    lo = _pick(columns, "lo", "low", "lower", suffixes=("_lo", "_low", "_lower"))
    hi = _pick(columns, "hi", "high", "upper", suffixes=("_hi", "_high", "_upper"))
    if not (site and value and lo and hi):
        return {"status": f"n/a (unrecognised `memloupe top --csv` columns: {', '.join(columns)})"}
    estimates = {row[site]: row for row in sampled_rows}
    sites = []
    for row in exact_rows[:limit]:
        est = estimates.get(row[site])
        exact = _int(row[value])
        if est is None:
            sites.append({"name": row[site], "exact": exact, "estimate": None, "lo": None,
                          "hi": None, "inside": False})
            continue
        low, high = _int(est[lo]), _int(est[hi])
        sites.append({"name": row[site], "exact": exact, "estimate": _int(est[value]),
                      "lo": low, "hi": high,
                      "inside": None not in (low, high, exact) and low <= exact <= high})
    return {"status": "ok", "sites": sites}
