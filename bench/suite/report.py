"""The markdown the README embeds: results tables, targets, machine, legend."""
from . import figures
from .figures import Target
from .stats import fmt, fmt_int, median, mib

CONFIG_LABELS = {"native": "native", "sampled": "memloupe sampled", "all": "memloupe --all",
                 "run-all": "memloupe run --all", "heaptrack": "heaptrack", "massif": "valgrind massif"}


def _x(value):
    return "n/a" if value is None else f"{value:.2f}x"


def _output_cell(r):
    if r.outputs_total == 0:
        return ""
    if r.outputs_same == r.outputs_total:
        return "same"
    return f"DIFFERS ({r.outputs_total - r.outputs_same}/{r.outputs_total})"


def _time_table(results, with_heaptrack=True):
    head = ["workload", "configuration", "wall s", "x native"]
    if with_heaptrack:
        head.append("x heaptrack")
    head += ["CPU s", "CPU x native", "peak RSS MiB", "finalise s"]
    if with_heaptrack:
        head.append("with finalise x heaptrack")
    head.append("output")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for result in results:
        first = True
        for key, cr in result.configs.items():
            name = result.workload.title if first else ""
            first = False
            r = figures.row(result, key)
            if r.wall_s is None:
                cells = [name, CONFIG_LABELS[key], r.status] + [""] * (len(head) - 3)
            else:
                status_note = "" if r.status == "ok" else f" ({r.status})"
                cells = [name, CONFIG_LABELS[key] + status_note, fmt(r.wall_s, 3), _x(r.x_native)]
                if with_heaptrack:
                    cells.append(_x(r.x_heaptrack) if key != "heaptrack" else "1.00x")
                traced = key in ("sampled", "all", "run-all")
                cells += [fmt(r.cpu_s, 3), _x(r.x_native_cpu), fmt(mib(r.rss_kib), 1),
                          fmt(r.finalise_s, 3) if traced else ""]
                if with_heaptrack:
                    cells.append(_x(r.x_heaptrack_finalised) if traced else "")
                cells.append(_output_cell(r))
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def _wait_table(results, counts=None):
    """Record + finalise, as a user of `memloupe run` waits for it, beside heaptrack's
    whole run (which records and interprets in one)."""
    by_key = {wc.workload.key: wc for wc in counts or ()}
    head = ["workload", "configuration", "record s", "finalise s", "waits s", "x native",
            "x heaptrack's run", "finalise / native run", "CPU s (record + finalise)",
            "CPU x heaptrack's", "callgrind: record + finalise x native"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for result in results:
        ht = figures.row(result, "heaptrack")
        first = True
        for key in ("sampled", "all", "run-all", "heaptrack"):
            if key not in result.configs:
                continue
            r = figures.row(result, key)
            name = result.workload.title if first else ""
            first = False
            if r.wall_s is None:
                lines.append("| " + " | ".join([name, CONFIG_LABELS[key], r.status] + [""] * (len(head) - 3)) + " |")
                continue
            if key == "heaptrack":
                cells = [fmt(r.wall_s, 3), "", fmt(r.wall_s, 3), _x(r.x_native), "1.00x", "",
                         fmt(r.cpu_s, 3), "1.00x", "n/a (cannot run under callgrind)"]
            elif key == "run-all":
                # One command: its record and finalise overlap; "finalise" is the wall
                # left after the program's exit.
                after = (fmt(r.finalise_s, 3) + " after exit" + (f" ({fmt(r.wall_less_duration_s, 3)})"
                                                                  if r.wall_less_duration_s is not None else "")
                         if r.finalise_s is not None else "n/a")
                cells = ["(in waits)", after,
                         fmt(r.wait_s, 3), _x(r.wait_x_native),
                         _x(r.x_heaptrack_finalised) if ht.wall_s else "n/a",
                         fmt(100 * r.finalise_x_native, 0, "%") if r.finalise_x_native is not None else "n/a",
                         fmt(r.wait_cpu_s, 3), _x(r.wait_cpu_x_heaptrack) if ht.wall_s else "n/a", "n/a"]
            else:
                wc = by_key.get(result.workload.key)
                count = wc.counts.get(key) if wc else None
                native = wc.counts["native"].instructions if wc else None
                both = (count.instructions + count.finalise_instructions
                        if count and count.instructions and count.finalise_instructions else None)
                cells = [fmt(r.wall_s, 3), fmt(r.finalise_s, 3), fmt(r.wait_s, 3), _x(r.wait_x_native),
                         _x(r.x_heaptrack_finalised) if ht.wall_s else "n/a",
                         fmt(100 * r.finalise_x_native, 0, "%") if r.finalise_x_native is not None else "n/a",
                         fmt(r.wait_cpu_s, 3), _x(r.wait_cpu_x_heaptrack) if ht.wall_s else "n/a",
                         _x(both / native) if both and native else "n/a"]
            lines.append("| " + " | ".join([name, CONFIG_LABELS[key], *cells]) + " |")
    return lines


def _size_table(results):
    lines = ["| workload | allocation calls (memloupe summary) | allocation calls "
             "(heaptrack_print) | samples | sampled: recorded B | finalised B "
             "| B / sample, whole file | B / sample, marginal | --all: recorded B "
             "| finalised B | B / allocation call (its free included) | finalised B / allocation call "
             "| heaptrack .zst B | B / allocation call (its free included) |", "|" + "---|" * 14]
    for result in results:
        s_cr, a_cr = result.configs.get("sampled"), result.configs.get("all")
        s_raw, s_final, s_bound = figures.trace_bytes(s_cr)
        a_raw, a_final, a_bound = figures.trace_bytes(a_cr, "median")
        h_bytes = figures.trace_bytes(result.configs.get("heaptrack"), "median")[0]
        samples = s_cr.samples if s_cr else None
        lines.append("| " + " | ".join([
            result.workload.title, fmt_int(result.memloupe_calls),
            fmt_int(result.heaptrack_calls), fmt_int(samples), fmt_int(s_raw),
            fmt_int(s_final), fmt(figures.per(s_bound, samples), 1),
            fmt(figures.marginal_bytes_per_sample(s_cr), 1),
            fmt_int(a_raw), fmt_int(a_final),
            fmt(figures.per(a_bound, figures.calls(result, "memloupe")), 2),
            fmt(figures.per(a_final, figures.calls(result, "memloupe")), 2),
            fmt_int(h_bytes), fmt(figures.per(h_bytes, figures.calls(result, "heaptrack")), 2),
        ]) + " |")
    return lines


def _memory_table(results):
    lines = ["| workload | native peak RSS MiB | sampled peak RSS MiB | recorder memory MiB "
             "| target under heaptrack MiB |", "|---|---|---|---|---|"]
    for result in results:
        n, s = figures.row(result, "native"), figures.row(result, "sampled")
        lines.append(f"| {result.workload.title} | {fmt(mib(n.rss_kib), 1)} | "
                     f"{fmt(mib(s.rss_kib), 1)} | {fmt(figures.recorder_memory_mib(result), 1)} | "
                     f"{fmt(mib(result.heaptrack_target_rss_kib), 1)} |")
    return lines


def _analysis_table(analysis):
    lines = ["| command (on (a)'s traces) | median s | faster than heaptrack_print |",
             "|---|---|---|"]
    for name, times in analysis["times"].items():
        t = median(times)
        ratio = figures.analysis_ratio(analysis, name) if name != "heaptrack_print" else 1.0
        compared = not name.startswith(figures.FINALISE)
        lines.append(f"| `{name}` | {fmt(t, 3) if times else 'n/a (not built)'} | "
                     f"{_x(ratio) if times and compared else ''} |")
    return lines


def _coverage_line(accuracy):
    over = accuracy.get("over_runs")
    if not over:
        return []
    return [f"Over every run's sampled trace (each against the last --all trace): "
            f"{over[0]} of {over[1]} estimates inside their 95% intervals "
            f"({100 * over[0] / over[1]:.0f}%; correct intervals give 95% on average). "
            "The table shows the last run's.", ""]


def _accuracy_table(accuracy):
    lines = [f"Sampling every {fmt_int(accuracy['every'])} bytes on average; sites are whole "
             "stacks (innermost first); a site with no sample has estimate 0 and interval "
             "[0, 3.69 x that mean].", "",
             *_coverage_line(accuracy),
             "| site | --all bytes | sampled estimate | 95% interval | inside |",
             "|---|---|---|---|---|"]
    for site in accuracy["sites"]:
        name = site["name"].replace("|", "\\|")
        lines.append(f"| `{name}` | {fmt_int(site['exact'])} | "
                     f"{fmt_int(site['estimate']) if site['sampled'] else '0 (no sample)'} | "
                     f"{fmt_int(site['lo'])} – {fmt_int(site['hi'])} | "
                     f"{'yes' if site['inside'] else '**no**'} |")
    return lines


def targets(main, analysis, accuracy, instructions=None):
    by_key = {r.workload.key: r for r in main}
    out = []

    def ratio_target(key, config, limit, label):
        r = by_key.get(key)
        row = figures.row(r, config) if r else None
        value = row.x_native if row else None
        out.append(Target(label, _x(value) if value else (row.status if row else "n/a"),
                          None if value is None else value <= limit))

    for key in ("a", "b", "c-sqlite", "c-python", "c-cc1plus", "d-maps"):
        if key in by_key:
            ratio_target(key, "sampled", 1.03,
                         f"sampled wall <= 1.03x native, {by_key[key].workload.title}")
    ratio_target("a", "all", 2.5, "--all wall <= 2.5x native, (a)")
    for key in ("a", "b", "c-sqlite", "c-cc1plus", "d-maps"):  # issue 13: what the user waits for
        r = by_key.get(key)
        if r is None:
            continue
        # `memloupe run --all` as the user runs it, when measured; else record-only plus
        # `memloupe symbolize` after it.
        run_row = figures.row(r, "run-all")
        row = run_row if run_row.wall_s is not None else figures.row(r, "all")
        title = r.workload.title
        for label, value, limit in (
                ("--all record + finalise <= 2.5x native", row.wait_x_native, 2.5),
                ("--all record + finalise <= 0.4x heaptrack's whole run", row.x_heaptrack_finalised, 0.4)):
            out.append(Target(f"{label}, {title}", _x(value), None if value is None else value <= limit))
        v = row.finalise_x_native
        out.append(Target(f"--all finalise after exit <= 10% of the native run, {title}",
                          fmt(100 * v, 0, "%") if v is not None else "n/a", None if v is None else v <= 0.10))
    for key in ("a", "b", "c-sqlite", "c-python", "c-cc1plus", "d-maps"):
        if key in by_key:
            counts = next((c for c in instructions or () if c.workload.key == key), None)
            value = counts.ratio("sampled") if counts else None
            out.append(Target(f"sampled instructions <= 1.03x native (callgrind), "
                              f"{by_key[key].workload.title}", _x(value),
                              None if value is None else value <= 1.03))
    for key in ("a", "b"):
        r = by_key.get(key)
        if r is None:
            continue
        # The marginal cost: the whole file over a short run is mostly fixed bytes.
        v = figures.marginal_bytes_per_sample(r.configs.get("sampled"))
        out.append(Target(f"sampled trace <= 12 B per sampled alloc+free, {r.workload.title}",
                          fmt(v, 1, " B"), None if v is None else v <= 12))
    if "a" in by_key:
        r = by_key["a"]
        v = figures.per(figures.trace_bytes(r.configs.get("all"), "median")[2], figures.calls(r))
        out.append(Target("--all trace <= 1.5 B per allocation call (its free included), (a)", fmt(v, 2, " B"),
                          None if v is None else v <= 1.5))
    for key in ("a", "b", "c-sqlite", "c-cc1plus", "d-maps"):  # issue 13: the file the user keeps, against heaptrack's
        r = by_key.get(key)
        if r is None:
            continue
        # The file `memloupe run --all` leaves (else `--all` then `symbolize`), and heaptrack's:
        # medians over the runs.
        kept = r.configs.get("run-all")
        if kept is None or not kept.runs:
            kept = r.configs.get("all")
        ours = figures.per(figures.trace_bytes(kept, "median")[1], figures.calls(r, "memloupe"))
        theirs = figures.per(figures.trace_bytes(r.configs.get("heaptrack"), "median")[0], figures.calls(r, "heaptrack"))
        out.append(Target(f"--all finalised trace <= heaptrack's bytes per allocation call, {r.workload.title}",
                          f"{fmt(ours, 2, ' B')} ({fmt(theirs, 2, ' B')})",
                          None if ours is None or theirs is None else ours <= theirs))
    for r in main:
        v = figures.recorder_memory_mib(r)
        out.append(Target(f"recorder memory (sampled) <= native + 4 MiB, {r.workload.title}",
                          fmt(v, 1, " MiB"), None if v is None else v <= 4))
    for name in ("memloupe summary", "memloupe report"):
        v = figures.analysis_ratio(analysis, name) if analysis else None
        out.append(Target(f"`{name}` >= 10x faster than heaptrack_print, (a)",
                          _x(v), None if v is None else v >= 10))
    if accuracy and accuracy.get("sites"):
        inside = sum(s["inside"] for s in accuracy["sites"])
        total = len(accuracy["sites"])
        over = accuracy.get("over_runs")
        runs = f"; {over[0]}/{over[1]} over every run's sampled trace" if over else ""
        out.append(Target("top 10 sites' sampled estimates inside their 95% intervals of --all",
                          f"{inside}/{total} (last run){runs}", inside == total))
    else:
        out.append(Target("top 10 sites' sampled estimates inside their 95% intervals of --all",
                          (accuracy or {}).get("status", "n/a (not built)"), None))
    return out


def _instructions_table(counts):
    lines = ["| workload | size | native instructions | sampled instructions "
             "| sampled x native | sampled: alloc events | --all instructions "
             "| --all x native | output |", "|" + "---|" * 9]

    for wc in counts:
        n, s, a = (wc.counts[k] for k in ("native", "sampled", "all"))
        same = all(c.same_output for c in (n, s, a) if c.status == "ok")
        lines.append("| " + " | ".join([
            wc.workload.title, fmt_int(wc.workload.size),
            fmt_int(n.instructions) if n.status == "ok" else n.status,
            fmt_int(s.instructions) if s.status == "ok" else s.status,
            _x(wc.ratio("sampled")) if s.status == "ok" else "", fmt_int(s.samples),
            fmt_int(a.instructions) if a.status == "ok" else a.status,
            _x(wc.ratio("all")) if a.status == "ok" else "",
            "same" if same else "DIFFERS"]) + " |")
    return lines


def _targets_table(target_list):
    lines = ["| target | measured | |", "|---|---|---|"]
    for t in target_list:
        verdict = "n/a" if t.met is None else ("met" if t.met else "**missed**")
        lines.append(f"| {t.name} | {t.measured} | {verdict} |")
    return lines


LEGEND = """\
- **wall s**: median wall-clock time of the target run over the runs, from the suite's
  fork+exec to wait4 (memloupe: the program under the preload library, as
  `memloupe run` runs it, without the finalise step; heaptrack: its whole `heaptrack`
  command, i.e. target plus its concurrent interpreter and compressor).
- **x native**, **x heaptrack**: median over runs of the per-run ratio to the native
  (resp. heaptrack) run of the same round; rounds interleave all configurations.
- **CPU s**, **CPU x native**: user+system time of the process and its descendants
  (wait4 rusage); less sensitive than wall time to other load on the machine.
- **peak RSS MiB**: wait4's ru_maxrss, the largest single process of the run (for
  heaptrack this is usually its interpreter, not the target).
- **finalise s**: `memloupe symbolize` on the recorded trace (what `memloupe run` does
  after the program exits: resolve addresses with libdw and embed the symbols).
- **with finalise x heaptrack**: median over runs of (wall + finalise) / heaptrack's
  wall in the same round: what a user waits for from start to a finished trace with
  each tool, since heaptrack's wall already includes its interpreter.
- **output**: whether the workload printed the same checksum line as natively.
- **memloupe run --all**: the command a user types, timed whole: the launcher, the
  program under the preload library, the finaliser following the trace while it runs
  (at the normal priority), and what is left after the program exits. Its **finalise** column is
  that last part, "after exit": from the trace's end (its start_wall_ns + duration_ns)
  to memloupe's reaping, both on CLOCK_REALTIME; in brackets the command's wall minus
  the program's duration, which also counts what runs before the trace's first clock
  (memloupe's own start, the fork and exec). The issue-13 targets use this row when it
  was measured.
- **What the user waits for**: **waits s** is the median over runs of the run's wall
  time plus its finalise's (`memloupe run` runs the program, then finalises: from
  pressing enter to a finished trace); **x native** and **x heaptrack's run** are
  paired per round against the native run and heaptrack's whole run (which records and
  interprets at once); **finalise / native run** is the finalise alone over the native
  run (issue 13's 10%); **CPU s** adds the two processes' user+system time, **CPU x
  heaptrack's** pairs it with heaptrack's whole run's; **callgrind** adds the
  instructions of `memloupe symbolize` on the callgrind run's own trace to those of
  that run (at the instructions table's size) and divides by the native count.
- **instructions**: `valgrind --tool=callgrind` (total `Ir` of the program's threads),
  one run per configuration at the size shown; memloupe's variables are set in
  valgrind's environment with `MEMLOUPE_FOLLOW_FORK=1`, and the program's trace (the
  last of the chain PATH, PATH.1, ...) must hold alloc events (**sampled: alloc
  events**). **x native** divides by the native count. Deterministic apart from thread
  interleaving; it does not see cache misses or time spent waiting.
- **allocation calls**: calls to malloc, calloc, realloc, new, ... ; a call's free is
  part of it, not counted again (heaptrack_print's "calls to allocation functions"
  counts the same way), as `memloupe summary` counts them on the --all trace and as
  heaptrack_print counts them on heaptrack's trace; each tool's bytes per call divide
  by its own count (by the workload's own count, which alloc_mt prints, if the tool's
  is unavailable).
- **recorded B**: the trace as the preload library wrote it (events only, not
  compressed); **finalised B**: after `memloupe symbolize` (events compressed, symbols
  section appended). **B / sample** and **B / call** divide the smaller of the two (an
  upper bound for the symbol-free size) by the sampled allocations (`alloc` events in
  `memloupe info`; each carries its backtrace, and its free if freed) or by the
  allocation calls; heaptrack's by its `.zst` size. A short run's whole file is
  dominated by fixed bytes (header, module map, thread events, RSS samples), so
  **B / sample, marginal** records the workload once more in sampled mode at a smaller
  size (the quick size; the smoke size with `--quick`) and divides the difference in
  recorded bytes by the difference in alloc events: what one more sampled allocation
  (its backtrace and its free) costs. The 12 B target is checked against it.
- **recorder memory**: sampled-mode peak RSS minus native peak RSS (medians).
  **target under heaptrack**: the target's own peak RSS under heaptrack, as
  heaptrack_print reports it (last run).
- **analysis**: `memloupe summary` and `memloupe report` on (a)'s --all trace against
  `heaptrack_print` on (a)'s heaptrack trace (both from the last round), medians; plain,
  they answer from the trace's analysis index, with `--no-index` from its events. The
  `symbolize --force` rows re-finalise the --all trace into a copy with and without
  building the index: their difference is what the index costs the finalise step.
- **accuracy**: the 10 largest sites of (a) by allocated bytes in the --all trace; for
  each, the sampled trace's estimate and 95% interval from `memloupe top --csv`.
"""


def _load_warning(machine, data):
    busiest = max(machine["loadavg_start"], data["loadavg_end"])
    if not machine["nproc"] or busiest <= machine["nproc"]:
        return []
    return [f"**Warning:** the load average ({busiest:.1f}) exceeded the number of CPUs "
            f"({machine['nproc']}) while this ran: other work shared the CPUs, so wall times "
            "and ratios near 1.0 are unreliable (CPU-time ratios less so). Re-run on a quiet "
            "machine for figures to quote.", ""]


def render(data):
    m = data["machine"]
    out = [
        "# memloupe benchmark suite: latest results", "",
        f"Reproduce: `{data['command']}`", "",
        f"Measured {m['date']} at commit {m['commit']}, {data['runs']} "
        f"run{'' if data['runs'] == 1 else 's'} per figure "
        f"({data['size_name']} sizes), suite wall time {data['elapsed_s']:.0f} s.  ",
        f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['memory_gib']} GiB, Linux {m['kernel']}, "
        f"{m['glibc']}; load average {m['loadavg_start']:.2f} at start, "
        f"{data['loadavg_end']:.2f} at end.  ",
        f"Software: {m['compiler']}, {m['build_type']} build; {m['heaptrack']}; "
        f"{m['valgrind']}; {m['python3']}; sqlite {m['sqlite3']}.", "",
        *_load_warning(m, data),
        "## Targets (issue 5)", "", *_targets_table(data["targets"]), "",
        "## Time and peak memory", "", *_time_table(data["main"]), "",
        "## What the user waits for (record + finalise)", "",
        *_wait_table(data["main"], data.get("instructions")), "",
    ]
    if data.get("massif"):
        size = data["massif"][0].workload.size
        out += [f"(a) at a reduced size (--iterations {size}) under valgrind massif, with "
                "its own native runs at that size:", "",
                *_time_table(data["massif"], with_heaptrack=False), ""]
    counts = data.get("instructions")
    out += ["## Instructions (valgrind callgrind, one run each)", ""]
    if counts:
        out += [f"{data['instructions_size_name'].capitalize()} sizes (see `size`); "
                "instructions of every thread of the program, as callgrind counts them "
                "(valgrind runs (a)'s threads one at a time: fine for counting, not a "
                "timing). A proxy for the CPU cost that does not depend on other load; it "
                "does not see cache misses. heaptrack cannot run under callgrind.", "",
                *_instructions_table(counts), ""]
    else:
        out += [data.get("instructions_status") or "n/a", ""]
    out += ["## Trace size (last run's traces)", "", *_size_table(data["main"]), "",
            "## Recorder memory in sampled mode", "", *_memory_table(data["main"]), ""]
    if data.get("analysis"):
        out += ["## Analysis speed", "", *_analysis_table(data["analysis"]), ""]
    acc = data.get("accuracy") or {}
    out += ["## Accuracy at the default sampling rate", ""]
    out += _accuracy_table(acc) if acc.get("sites") else [acc.get("status", "n/a (not built)")]
    out += ["", "## Legend", "", LEGEND]
    return "\n".join(out)
