"""The machine and software a table was measured on."""
import datetime
import os
import platform
import re
import subprocess


def _first_line(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else None


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_total_gib():
    try:
        with open("/proc/meminfo") as f:
            m = re.search(r"MemTotal:\s+(\d+) kB", f.read())
            return round(int(m.group(1)) / 1024 / 1024, 1) if m else None
    except OSError:
        return None


def _cache(build_dir, name):
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            m = re.search(rf"^{name}:\w+=(.*)$", f.read(), re.MULTILINE)
    except OSError:
        return None
    return m.group(1) if m else None


def describe(tools, repo_dir):
    commit = _first_line(["git", "-C", repo_dir, "rev-parse", "--short", "HEAD"])
    dirty = _first_line(["git", "-C", repo_dir, "status", "--porcelain", "--untracked-files=no"])
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "memory_gib": _mem_total_gib(),
        "kernel": platform.release(),
        "glibc": os.confstr("CS_GNU_LIBC_VERSION"),
        "loadavg_start": os.getloadavg()[0],
        "commit": (commit or "unknown") + (" (with uncommitted changes)" if dirty else ""),
        "compiler": (_first_line([_cache(tools.build_dir, "CMAKE_CXX_COMPILER"), "--version"])
                     if _cache(tools.build_dir, "CMAKE_CXX_COMPILER") else None),
        "build_type": _cache(tools.build_dir, "CMAKE_BUILD_TYPE"),
        "heaptrack": _first_line([tools.heaptrack, "--version"]) if tools.heaptrack else None,
        "valgrind": _first_line([tools.valgrind, "--version"]) if tools.valgrind else None,
        "python3": _first_line([tools.python3, "--version"]) if tools.python3 else None,
        "sqlite3": (_first_line([tools.sqlite3, "--version"]) or "").split(" ")[0] or None
        if tools.sqlite3 else None,
    }
