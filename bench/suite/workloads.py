"""The suite's workloads and their sizes.

Each workload prints one line containing `checksum=`; that line must be identical under
every configuration (a profiler must not change what the program does).
"""
import dataclasses
import os

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
}


@dataclasses.dataclass(frozen=True)
class Workload:
    key: str  # a, b, c-sqlite, c-python
    title: str  # shown in the tables
    argv: tuple
    size: int  # the number that SIZES sets (iterations, rounds, rows)
    stdin: str | None = None
    env: tuple = ()  # extra (name, value) pairs

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
    raise KeyError(key)


def checksum_line(stdout):
    for line in stdout.splitlines():
        if "checksum=" in line:
            return line.strip()
    return None


def own_call_count(stdout):
    """alloc_mt prints `calls=N`: its own count of its explicit allocation calls."""
    line = checksum_line(stdout) or ""
    for word in line.split():
        if word.startswith("calls="):
            return int(word[len("calls="):])
    return None
