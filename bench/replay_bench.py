#!/usr/bin/env python3
"""The replay benchmark: for each workload, the real program run under each allocator
(LD_PRELOAD) against `memloupe replay`'s prediction, and the replay's own speed.

  python3 bench/replay_bench.py                      # a, b, c-sqlite, c-python; 3 runs
  python3 bench/replay_bench.py --only c-sqlite --runs 5

For each workload it
  1. runs the program natively under glibc, jemalloc, tcmalloc and mimalloc
     (interleaved, --runs times each; medians of wall time and peak RSS, ru_maxrss
     through bench_spawn);
  2. records it once with `memloupe run --all`;
  3. runs `memloupe replay --json --repeat RUNS` on the trace (also timed as a whole,
     preparation included);
and writes results/replay.md: predicted against real peak RSS with the error of each
prediction, replay speed in calls per second, and the replay's time against the
program's. Standard library only; reuses the suite's workload definitions and runner.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

from suite import runner, workloads  # noqa: E402
from suite import tools as tools_mod  # noqa: E402

REPO = os.path.dirname(HERE)
ALLOCATORS = ("glibc", "jemalloc", "tcmalloc", "mimalloc")


def library(name, libs):
    """The path `memloupe replay` used for `name` (it reports it), or None for glibc."""
    return libs.get(name) or None


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(REPO, "build", "release"))
    p.add_argument("--runs", type=int, default=3, help="runs per figure (medians)")
    p.add_argument("--only", default="a,b,c-sqlite,c-python")
    p.add_argument("--size", default="full", choices=("full", "quick"))
    p.add_argument("--out", default=os.path.join(HERE, "results", "replay.md"))
    return p.parse_args()


def native(wl, lib, runs):
    """Median wall and peak RSS of the program with `lib` preloaded (None: glibc)."""
    walls, rss = [], []
    for _ in range(runs):
        env = wl.environ({"LD_PRELOAD": lib} if lib else {})
        m = runner.run(wl.argv, env=env, stdin_path=wl.stdin)
        if not m.ok:
            raise SystemExit(f"{wl.key} under {lib or 'glibc'} failed: {m.stderr_tail}")
        walls.append(m.wall_s)
        rss.append(m.maxrss_kib * 1024)
    return statistics.median(walls), statistics.median(rss)


def record(tools, wl, trace):
    env = wl.environ()
    argv = (tools.memloupe, "run", "--all", "-o", trace, "--", *wl.argv)
    m = runner.run(argv, env=env, stdin_path=wl.stdin)
    if not m.ok:
        raise SystemExit(f"recording {wl.key} failed: {m.stderr_tail}")


def replay(tools, trace, runs):
    start = time.monotonic()
    out = subprocess.run([tools.memloupe, "replay", "--json", "--repeat", str(runs), trace],
                         capture_output=True, text=True, timeout=3600)
    elapsed = time.monotonic() - start
    if out.returncode != 0:
        raise SystemExit(f"memloupe replay {trace} failed: {out.stderr}")
    return json.loads(out.stdout), elapsed


def mib(b):
    return f"{b / 2**20:.1f} MiB"


def main():
    args = parse_args()
    tools = tools_mod.find(args.build)
    if not tools.memloupe or not tools.bench_spawn:
        raise SystemExit(f"build memloupe and bench_spawn in {args.build} first")
    runner.use_spawner(tools.bench_spawn)
    load_start = os.getloadavg()[0]
    rows, speed = [], []
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as tmp:
        for key in args.only.split(","):
            wl, reason = workloads.build(key, args.size, tools)
            if wl is None:
                print(f"{key}: skipped ({reason})")
                continue
            trace = os.path.join(tmp, f"{key}.trace")
            print(f"{key}: recording", flush=True)
            record(tools, wl, trace)
            print(f"{key}: replaying", flush=True)
            result, whole_s = replay(tools, trace, args.runs)
            libs = {r["allocator"]: r["library"] for r in result["runs"]}
            # Native runs, interleaved over the allocators.
            real = {a: ([], []) for a in ALLOCATORS}
            print(f"{key}: native runs", flush=True)
            for _ in range(args.runs):
                for a in ALLOCATORS:
                    if a != "glibc" and not libs.get(a):
                        continue
                    w, r = native(wl, library(a, libs), 1)
                    real[a][0].append(w)
                    real[a][1].append(r)
            by = {r["allocator"]: r for r in result["runs"]}
            for a in ALLOCATORS:
                run = by.get(a)
                if not run or "wall_s" not in run or not real[a][0]:
                    continue
                real_rss = statistics.median(real[a][1])
                pred = run["predicted_peak_rss_bytes"]
                rows.append((wl.title, a, real_rss, run["peak_rss_bytes"], pred,
                             (pred / real_rss - 1) if pred else None,
                             statistics.median(real[a][0]), run["wall_s"]))
            calls = result["alloc_calls"] + result["free_calls"]
            g = by["glibc"]
            speed.append((wl.title, calls, result["threads"], g["wall_s"], calls / g["wall_s"],
                          statistics.median(real["glibc"][0]), whole_s))
    load_end = os.getloadavg()[0]

    lines = [f"# Replay: predictions against real runs, and replay speed",
             "",
             f"`python3 bench/replay_bench.py --runs {args.runs}` (size {args.size}); "
             f"load average {load_start:.1f} at start, {load_end:.1f} at end. Medians of "
             f"{args.runs} runs; real = the program run with `LD_PRELOAD` of the allocator "
             "(peak RSS = ru_maxrss); predicted = `memloupe replay`'s "
             "`predicted_peak_rss_bytes` (docs/REPLAY.md § Prediction).",
             "",
             "| workload | allocator | real peak RSS | replay's peak RSS | predicted | error | real wall | replay wall |",
             "|---|---|---|---|---|---|---|---|"]
    for t, a, real_rss, rep, pred, err, rw, pw in rows:
        lines.append(f"| {t} | {a} | {mib(real_rss)} | {mib(rep)} | {mib(pred) if pred else '-'} | "
                     f"{f'{err * 100:+.1f}%' if err is not None else '-'} | {rw:.3f} s | {pw:.3f} s |")
    lines += ["",
              "| workload | calls | threads | replay (glibc, timed part) | calls/s | program (glibc) | replay / program | `memloupe replay` whole command, all allocators x runs |",
              "|---|---|---|---|---|---|---|---|"]
    for t, calls, threads, rw, cps, pw, whole in speed:
        lines.append(f"| {t} | {calls:,} | {threads} | {rw:.3f} s | {cps / 1e6:.1f} M | {pw:.3f} s | "
                     f"{rw / pw:.2f}x | {whole:.1f} s |")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
