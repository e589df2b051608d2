"""The suite's workloads and their sizes.

Each workload prints one line containing `checksum=`; that line must be identical under
every configuration (a profiler must not change what the program does).
"""
import dataclasses
import hashlib
import os
import subprocess
import tempfile

WORKLOAD_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "workloads")

# Size parameter per workload and size: "full" is the default suite, "quick" the smoke
# run used while iterating, "smoke" the ctest check, "massif" the reduced size that (a)
# runs at under valgrind massif (natively too, for an honest ratio).
SIZES = {
    "a": {"full": 670000, "quick": 100000, "smoke": 2000, "massif": 67000, "massif-quick": 10000},
    "b": {"full": 3000, "quick": 400, "smoke": 20},
    "c-sqlite": {"full": 120000, "quick": 20000, "smoke": 2000},
    "c-python": {"full": 20, "quick": 3, "smoke": 1},
    # cc1plus: how much of the standard library its translation unit includes
    # (bench/workloads/cc1plus_input.cc): 3 = <regex> too (~1.5 M calls), 1 = <map>,
    # <string>, <vector> (~0.25 M).
    "c-cc1plus": {"full": 3, "quick": 1, "smoke": 1},
    # maps_mt: iterations per thread (bench/workloads/maps_mt.cc; 2.87 M calls at full).
    "d-maps": {"full": 1000000, "quick": 150000, "smoke": 2000},
}


@dataclasses.dataclass(frozen=True)
class Workload:
    key: str  # a, b, c-sqlite, c-python, c-cc1plus, d-maps
    title: str  # shown in the tables
    argv: tuple
    size: int  # the number that SIZES sets (iterations, rounds, rows)
    stdin: str | None = None
    env: tuple = ()  # extra (name, value) pairs
    # The program prints no checksum line: its whole stdout is the output compared
    # between configurations (cc1plus's assembly), by its SHA-256.
    hash_stdout: bool = False

    def checksum(self, stdout):
        """The line that must equal the native run's: the program's checksum line."""
        if self.hash_stdout:
            return assembly_checksum(stdout)
        return checksum_line(stdout)

    def environ(self, extra=()):
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        env.update(dict(self.env))
        env.update(dict(extra))
        return env


def build(key, size_name, tools):
    """The workload `key` at size `size_name`, or (None, reason) if it cannot run here."""
    size = SIZES[key][size_name]
    if key == "a":
        if not tools.bench_alloc_mt:
            return None, "bench_alloc_mt not built"
        return Workload("a", "(a) alloc_mt, 4 threads",
                        (tools.bench_alloc_mt, "--iterations", str(size)), size), None
    if key == "b":
        if not tools.bench_stl_deep:
            return None, "bench_stl_deep not built"
        return Workload("b", "(b) stl_deep, depth 30-80",
                        (tools.bench_stl_deep, "--rounds", str(size)), size), None
    if key == "c-sqlite":
        if not tools.sqlite3:
            return None, "sqlite3 not installed"
        params = f"CREATE TABLE params(rows INTEGER); INSERT INTO params VALUES ({size})"
        return Workload("c-sqlite", "(c) sqlite3, SQL workload",
                        (tools.sqlite3, "-batch", "-cmd", params, ":memory:"), size,
                        stdin=os.path.join(WORKLOAD_DIR, "sqlite_workload.sql")), None
    if key == "c-python":
        if not tools.python3:
            return None, "python3 not installed"
        script = os.path.join(WORKLOAD_DIR, "py_workload.py")
        return Workload("c-python", "(c) python3, json/dict script",
                        (tools.python3, script, str(size)), size,
                        env=(("PYTHONHASHSEED", "0"), ("PYTHONDONTWRITEBYTECODE", "1"))), None
    if key == "c-cc1plus":
        if not tools.cc1plus:
            return None, "g++ (cc1plus) not installed"
        source = preprocessed_cc1plus_input(tools, size)
        if source is None:
            return None, "g++ -E failed on bench/workloads/cc1plus_input.cc"
        return Workload("c-cc1plus", "(c) cc1plus, g++ -O0 on <regex>" if size >= 3
                        else f"(c) cc1plus, g++ -O0, headers {size}",
                        (tools.cc1plus, "-quiet", "-O0", source, "-o", "-"), size,
                        hash_stdout=True), None
    if key == "d-maps":
        if not tools.bench_maps_mt:
            return None, "bench_maps_mt not built"
        return Workload("d-maps", "(d) maps_mt, 2 threads",
                        (tools.bench_maps_mt, "--iterations", str(size)), size), None
    raise KeyError(key)


def preprocessed_cc1plus_input(tools, size):
    """bench/workloads/cc1plus_input.cc through `g++ -E` (this machine's headers), once
    per size; the path of the .ii file, or None."""
    path = os.path.join(tempfile.gettempdir(), f"memloupe-bench-cc1plus-{size}.ii")
    done = subprocess.run([tools.gxx, "-E", f"-DMEMLOUPE_BENCH_HEADERS={size}",
                           os.path.join(WORKLOAD_DIR, "cc1plus_input.cc"), "-o", path],
                          capture_output=True)
    return path if done.returncode == 0 else None


def checksum_line(stdout):
    for line in stdout.splitlines():
        if "checksum=" in line:
            return line.strip()
    return None


def assembly_checksum(stdout):
    """The SHA-256 of the assembly cc1plus printed: from its `.file` line to its
    `.note.GNU-stack` section line. heaptrack's script prints its own lines to the same
    stdout before and after the program's."""
    lines = stdout.splitlines()
    first = next((i for i, l in enumerate(lines) if l.startswith("\t.file\t")), None)
    last = next((i for i in range(len(lines) - 1, -1, -1) if ".note.GNU-stack" in lines[i]), None)
    if first is None or last is None or last < first:
        return None
    return "sha256=" + hashlib.sha256("\n".join(lines[first:last + 1]).encode()).hexdigest()


def own_call_count(stdout):
    """alloc_mt prints `calls=N`: its own count of its explicit allocation calls."""
    line = checksum_line(stdout) or ""
    for word in line.split():
        if word.startswith("calls="):
            return int(word[len("calls="):])
    return None
