"""Medians and the number formats used in the tables."""
import statistics


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def paired_ratio(numerators, denominators):
    """Median over runs of run_i(config) / run_i(baseline). Runs are interleaved, so
    pairing cancels slow drift in the machine's load better than a ratio of medians."""
    ratios = [n / d for n, d in zip(numerators, denominators) if n is not None and d]
    return median(ratios)


def fmt(value, digits=2, suffix=""):
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}{suffix}"


def fmt_int(value):
    return "n/a" if value is None else f"{value:,}"


def mib(kib):
    return None if kib is None else kib / 1024.0
