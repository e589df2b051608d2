"""Finding the programs the suite drives: the workloads and memloupe in the build
directory, and the public tools it compares with. A tool that is missing is None, and
the table shows its columns as n/a with the reason."""
import dataclasses
import os
import re
import shutil
import subprocess


@dataclasses.dataclass
class Tools:
    build_dir: str
    bench_alloc_mt: str | None
    bench_stl_deep: str | None
    bench_maps_mt: str | None
    bench_spawn: str | None  # the measuring wrapper (see runner.py)
    memloupe: str | None  # the CLI (launcher + analysis commands)
    preload: str | None  # libmemloupe_preload.so
    memloupe_commands: frozenset  # sub-commands `memloupe --help` lists
    heaptrack: str | None
    heaptrack_print: str | None
    valgrind: str | None
    python3: str | None  # Debian's interpreter, not a version manager's shim
    sqlite3: str | None
    gxx: str | None  # Debian's g++ driver (preprocesses the cc1plus workload's input)
    cc1plus: str | None  # its compiler proper, the cc1plus workload
    skipped: frozenset = frozenset()  # configuration keys turned off on the command line

    def has(self, command):
        return self.memloupe is not None and command in self.memloupe_commands


def _file(path):
    return path if os.path.isfile(path) and os.access(path, os.R_OK) else None


def _exe(path):
    return path if path and os.path.isfile(path) and os.access(path, os.X_OK) else None


def _system_program(name):
    # /usr/bin first: a version manager's shim in PATH would be a shell script, and a
    # profiler would then measure the shell.
    return _exe(os.path.join("/usr/bin", name)) or _exe(shutil.which(name))


def _subcommands(memloupe):
    if memloupe is None:
        return frozenset()
    try:
        text = subprocess.run(
            [memloupe, "--help"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    # CLI11 lists sub-commands as indented "name   description" lines after
    # "SUBCOMMANDS:"; take the first word of each such line.
    names = set()
    in_list = False
    for line in text.splitlines():
        if line.strip().upper().startswith("SUBCOMMANDS"):
            in_list = True
            continue
        if in_list:
            m = re.match(r"\s+([a-z][a-z0-9_-]*)\b", line)
            if m:
                names.add(m.group(1))
            elif line.strip() and not line.startswith(" "):
                in_list = False
    return frozenset(names)


def find(build_dir):
    bin_dir = os.path.join(build_dir, "bin")
    memloupe = _exe(os.path.join(bin_dir, "memloupe"))
    gxx = _system_program("g++")
    return Tools(
        build_dir=build_dir,
        bench_alloc_mt=_exe(os.path.join(bin_dir, "bench_alloc_mt")),
        bench_stl_deep=_exe(os.path.join(bin_dir, "bench_stl_deep")),
        bench_maps_mt=_exe(os.path.join(bin_dir, "bench_maps_mt")),
        bench_spawn=_exe(os.path.join(bin_dir, "bench_spawn")),
        memloupe=memloupe,
        preload=_file(os.path.join(bin_dir, "libmemloupe_preload.so")),
        memloupe_commands=_subcommands(memloupe),
        heaptrack=_system_program("heaptrack"),
        heaptrack_print=_system_program("heaptrack_print"),
        valgrind=_system_program("valgrind"),
        python3=_exe(os.path.realpath("/usr/bin/python3")) or _system_program("python3"),
        sqlite3=_system_program("sqlite3"),
        gxx=gxx,
        cc1plus=_cc1plus(gxx),
    )


def _cc1plus(gxx):
    if gxx is None:
        return None
    try:
        path = subprocess.run([gxx, "-print-prog-name=cc1plus"], capture_output=True,
                              text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return _exe(path)
