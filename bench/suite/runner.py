"""Running one command and measuring it.

Every measured command runs under bench_spawn (bench/workloads/spawn.cc), which forks,
execs and wait4s it and reports wall time, CPU time and peak RSS. Measuring here with
os.wait4 would be wrong for memory: ru_maxrss survives exec, so a child forked from this
Python interpreter reports the interpreter's ~20 MiB as its own peak.

wait4's rusage covers the process and every descendant it reaped: CPU is their sum,
ru_maxrss the largest single process (for heaptrack usually its interpreter).
"""
import dataclasses
import os
import re
import signal
import subprocess
import tempfile

_spawner = None  # path of bench_spawn; set by use_spawner()


def use_spawner(path):
    global _spawner
    _spawner = path


@dataclasses.dataclass
class Measurement:
    wall_s: float
    cpu_s: float
    maxrss_kib: int
    exit_code: int  # negative: killed by that signal
    stdout: str
    stderr_tail: str
    timed_out: bool = False
    end_realtime_ns: int | None = None  # CLOCK_REALTIME at the reaping (bench_spawn)

    @property
    def ok(self):
        return self.exit_code == 0 and not self.timed_out


def _parse_result(text):
    fields = dict(re.findall(r"(\w+)=(-?\d+)", text))
    needed = ("wall_ns", "user_us", "sys_us", "maxrss_kib", "exit")
    if not all(k in fields for k in needed):
        return None
    end = int(fields["end_realtime_ns"]) if "end_realtime_ns" in fields else None
    return (int(fields["wall_ns"]) / 1e9,
            (int(fields["user_us"]) + int(fields["sys_us"])) / 1e6,
            int(fields["maxrss_kib"]), int(fields["exit"]), end)


def run(argv, *, env=None, stdin_path=None, timeout_s=900.0):
    """Runs argv to completion; its output is kept (in temporary files, so a chatty
    program cannot block on a full pipe). Without a spawner (the smoke test) only the
    exit status and output are meaningful."""
    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp, \
            open(os.path.join(tmp, "out"), "w+b") as out, \
            open(os.path.join(tmp, "err"), "w+b") as err, \
            open(stdin_path or os.devnull, "rb") as stdin:
        result_file = os.path.join(tmp, "result")
        full = [_spawner, result_file, *argv] if _spawner else list(argv)
        proc = subprocess.Popen(full, env=env, stdin=stdin, stdout=out, stderr=err,
                                start_new_session=True)
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)  # the session we created above
            proc.wait()
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")[-2000:]
        parsed = None
        if _spawner and os.path.exists(result_file):
            with open(result_file) as f:
                parsed = _parse_result(f.read())
        if parsed is None:
            parsed = (0.0, 0.0, 0, proc.returncode if proc.returncode is not None else -9, None)
        wall, cpu, rss, code, end = parsed
        return Measurement(wall, cpu, rss, code, stdout, stderr, timed_out, end)
