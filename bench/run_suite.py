#!/usr/bin/env python3
"""memloupe's benchmark suite: the workloads natively, under memloupe (sampled and
--all) and heaptrack, (a) also under valgrind massif at a reduced size; writes
bench/results/latest.md (the table the README embeds) and latest.json (every run).

  python3 bench/run_suite.py                 # full suite, ~10 min on 2 cores
  python3 bench/run_suite.py --quick         # small sizes, 1 run, ~1 min -> quick.md
  python3 bench/run_suite.py --smoke         # ctest: workloads run and are deterministic

See bench/README.md. Standard library only.
"""
import argparse
import dataclasses
import json
import os
import shlex
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # keep the source tree clean

from suite import accuracy, configs, instructions, machine, measure, report, runner  # noqa: E402
from suite import workloads  # noqa: E402
from suite import tools as tools_mod  # noqa: E402

REPO = os.path.dirname(HERE)
ALL_WORKLOADS = ("a", "b", "c-sqlite", "c-python", "c-cc1plus", "d-maps")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(REPO, "build", "release"),
                   help="build directory holding bin/ (default: build/release)")
    p.add_argument("--runs", type=int, help="runs per figure (default 5; 1 with --quick)")
    p.add_argument("--quick", action="store_true", help="small sizes, for iterating")
    p.add_argument("--smoke", action="store_true",
                   help="only check that each workload runs twice with the same checksum")
    p.add_argument("--only", default=",".join(ALL_WORKLOADS),
                   help=f"comma-separated subset of {','.join(ALL_WORKLOADS)}")
    p.add_argument("--no-heaptrack", action="store_true")
    p.add_argument("--no-massif", action="store_true")
    p.add_argument("--no-callgrind", action="store_true",
                   help="skip the instruction counts under valgrind callgrind")
    p.add_argument("--out", default=os.path.join(HERE, "results"),
                   help="where latest.md/.json (quick.md/.json with --quick) go")
    p.add_argument("--keep-traces", metavar="DIR", help="keep the last run's traces in DIR")
    return p.parse_args()


def smoke(tools, keys):
    """Each workload twice at a tiny size: exit 0, a checksum line, the same both times.
    No timing is asserted, ever."""
    failures = 0
    for key in keys:
        wl, reason = workloads.build(key, "smoke", tools)
        if wl is None:
            print(f"{key}: FAILED ({reason})")
            failures += 1
            continue
        lines = []
        for _ in range(2):
            m = runner.run(list(wl.argv), env=wl.environ(), stdin_path=wl.stdin, timeout_s=120)
            lines.append(wl.checksum(m.stdout) if m.ok else None)
        good = lines[0] is not None and lines[0] == lines[1]
        print(f"{key}: {'ok' if good else 'FAILED'}: {lines}")
        failures += not good
    return 1 if failures else 0


def command_line(args):
    parts = ["python3", "bench/run_suite.py"]
    if args.quick:
        parts.append("--quick")
    if args.runs:
        parts += ["--runs", str(args.runs)]
    if args.only != ",".join(ALL_WORKLOADS):
        parts += ["--only", args.only]
    parts += [f for f, on in (("--no-heaptrack", args.no_heaptrack),
                              ("--no-massif", args.no_massif),
                              ("--no-callgrind", args.no_callgrind)) if on]
    build = os.path.relpath(os.path.abspath(args.build), REPO)
    if build != os.path.join("build", "release"):
        parts += ["--build", build]
    return " ".join(shlex.quote(p) for p in parts)


def main():
    args = parse_args()
    keys = [k for k in args.only.split(",") if k]
    unknown = set(keys) - set(ALL_WORKLOADS)
    if unknown:
        sys.exit(f"unknown workloads: {', '.join(sorted(unknown))}")
    tools = tools_mod.find(os.path.abspath(args.build))
    if args.smoke:
        return smoke(tools, keys)
    if not tools.bench_spawn:
        sys.exit(f"bench_spawn is not built in {args.build}: "
                 "cmake --build BUILD --target bench_spawn bench_alloc_mt bench_stl_deep")
    runner.use_spawner(tools.bench_spawn)
    tools.skipped = frozenset(k for k, off in (("heaptrack", args.no_heaptrack),
                                               ("massif", args.no_massif),
                                               ("callgrind", args.no_callgrind)) if off)
    size_name = "quick" if args.quick else "full"
    # The next size down: the marginal trace cost per sample and the callgrind counts
    # (one run each, ~50x slower than native) use it.
    small_name = "smoke" if args.quick else "quick"
    runs = args.runs or (1 if args.quick else 5)
    elapsed = measure.timer()
    info = machine.describe(tools, REPO)

    wls = []
    for key in keys:
        wl, reason = workloads.build(key, size_name, tools)
        if wl is None:
            measure.log(f"skipping {key}: {reason}")
        else:
            wls.append(wl)
    trace_dir = args.keep_traces or tempfile.mkdtemp(prefix="memloupe-bench-")
    os.makedirs(trace_dir, exist_ok=True)

    main_results = measure.measure(wls, configs.MAIN_CONFIGS, tools, trace_dir, runs)
    measure.inspect_traces(main_results, tools)
    small = {wl.key: workloads.build(wl.key, small_name, tools)[0] for wl in wls}
    measure.log(f"[sampled at the {small_name} size, for the marginal bytes per sample]")
    measure.record_small_sampled(main_results, small, tools, trace_dir)
    counts, counts_status = [], instructions.unavailable(tools)
    if counts_status is None:
        measure.log(f"[callgrind, {small_name} size]")
        counts = instructions.measure([small[k] for k in small if small[k]], tools,
                                      trace_dir, measure.log)
    massif_results = []
    if "a" in keys and configs.MASSIF.unavailable(tools) is None:
        wl, _ = workloads.build("a", "massif-quick" if args.quick else "massif", tools)
        if wl is not None:
            wl = dataclasses.replace(wl, key="a-small", title="(a) alloc_mt, reduced")
            massif_results = measure.measure([wl], configs.MASSIF_CONFIGS, tools, trace_dir,
                                             runs, label="massif ")
    a = next((r for r in main_results if r.workload.key == "a"), None)
    analysis = measure.measure_analysis(a, tools, trace_dir, runs) if a else None
    acc = None
    if a:
        sampled, exact = a.configs["sampled"], a.configs["all"].last_trace
        acc = accuracy.compare(tools, sampled.last_trace, exact, sampled.every)
        acc["over_runs"] = accuracy.coverage(tools, sampled.sampled_traces, exact, sampled.every)

    data = {
        "command": command_line(args), "machine": info, "runs": runs, "size_name": size_name,
        "elapsed_s": elapsed(), "loadavg_end": os.getloadavg()[0],
        "main": main_results, "massif": massif_results, "analysis": analysis, "accuracy": acc,
        "instructions": counts, "instructions_status": counts_status,
        "instructions_size_name": small_name,
    }
    data["targets"] = report.targets(main_results, analysis, acc, counts)
    os.makedirs(args.out, exist_ok=True)
    stem = "quick" if args.quick else "latest"
    md = report.render(data)
    with open(os.path.join(args.out, stem + ".md"), "w") as f:
        f.write(md)
    raw = json.dumps(data, indent=1, default=lambda o: dataclasses.asdict(o)
                     if dataclasses.is_dataclass(o) else str(o))
    # Paths inside the checkout are written relative to it, and traces by their
    # file name (the directory is temporary), so the committed results name no
    # directory of the machine that produced them.
    for prefix in (REPO, os.path.abspath(trace_dir)):
        raw = raw.replace(json.dumps(prefix + os.sep)[1:-1], "")
    with open(os.path.join(args.out, stem + ".json"), "w") as f:
        f.write(raw)
    if not args.keep_traces:
        for name in os.listdir(trace_dir):
            os.remove(os.path.join(trace_dir, name))
        os.rmdir(trace_dir)
    print(md)
    measure.log(f"wrote {os.path.join(args.out, stem)}.md/.json in {elapsed():.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
