// What a heap snapshot costs: the 64-thread, 1 GiB program of the retention
// tests (tests/retention/programs/many_threads.cc, every word of its heap a
// pointer) run plainly, under memloupe --all (one snapshot by the API while all
// threads wait, one at exit), and under valgrind memcheck's leak check, the
// competitor, in the same run.
//
// Prints the snapshot's own cost from the trace (bytes scanned, how long the
// other threads were stopped, bytes scanned per second) and the runs' wall
// times as ratios to the plain run. memcheck gets a smaller heap by default
// (it runs the whole program 20-50x slower); its times are also given per GiB.
//
// Usage: snapshot_bench [MIB=1024] [MEMCHECK_MIB=256] [THREADS=64]
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "reader/snapshot_decoder.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;

fs::path bin(const std::string& name) { return fs::path(MEMLOUPE_BINARY_DIR) / "bin" / name; }

struct Run {
  double seconds = 0;
  std::string out;
  bool ok = false;
};

// Runs argv with extra environment entries; stdout goes to a file read back.
Run run(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env, const fs::path& out_file) {
  std::vector<std::string> env_strings(extra_env);
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  std::vector<char*> args, env;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env_strings) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  Run r;
  const auto start = std::chrono::steady_clock::now();
  pid_t pid;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), env.data()) != 0) return r;
  int status = 0;
  waitpid(pid, &status, 0);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  posix_spawn_file_actions_destroy(&actions);
  std::ifstream in(out_file);
  r.out.assign(std::istreambuf_iterator<char>(in), {});
  r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return r;
}

memloupe::reader::RawSnapshots snapshots_in(const fs::path& trace) {
  std::ifstream in(trace, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  return memloupe::reader::decode_snapshots(bytes);
}

void print(const char* what, const memloupe::reader::RawSnapshots& snaps) {
  for (const auto& s : snaps.snapshots) {
    const double stopped = static_cast<double>(s.stopped_ns) / 1e9;
    std::printf("%s snapshot %-11s %6zu blocks %7zu edges %7.1f MiB scanned, threads stopped %.3f s: %.2f GiB/s\n",
                what, ("\"" + s.label + "\"").c_str(), s.blocks.size(), s.edges.size(),
                static_cast<double>(s.bytes_scanned) / (1 << 20), stopped,
                stopped > 0 ? static_cast<double>(s.bytes_scanned) / stopped / (1 << 30) : 0.0);
  }
  if (!snaps.damage.empty()) std::printf("damage: %s\n", snaps.damage.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mib = argc > 1 ? argv[1] : "1024";
  const std::string memcheck_mib = argc > 2 ? argv[2] : "256";
  const std::string threads = argc > 3 ? argv[3] : "64";
  const fs::path dir = fs::temp_directory_path() / ("memloupe_snapshot_bench." + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string program = bin("retention_many_threads").string();
  const std::vector<std::string> recorder = {"LD_PRELOAD=" + bin("libmemloupe_preload.so").string(),
                                             "MEMLOUPE_MODE=all"};
  const auto traced_env = [&](const fs::path& trace) {
    std::vector<std::string> env = recorder;
    env.push_back("MEMLOUPE_OUTPUT=" + trace.string());
    return env;
  };

  const Run plain = run({program, threads, mib}, {}, dir / "plain.out");
  const Run traced = run({program, threads, mib}, traced_env(dir / "trace"), dir / "traced.out");
  // The scan's worst case: neighbouring words point into different blocks.
  const Run scattered = run({program, threads, mib, "scattered"}, traced_env(dir / "scattered"), dir / "scattered.out");
  const Run memcheck_plain = run({program, threads, memcheck_mib}, {}, dir / "mc_plain.out");
  const Run memcheck = run({"/usr/bin/valgrind", "-q", "--leak-check=full", "--show-leak-kinds=all",
                            "--log-file=" + (dir / "memcheck.log").string(), program, threads, memcheck_mib},
                           {}, dir / "memcheck.out");

  std::printf("program: %s threads, %s MiB heap of 64 KiB blocks, every word a pointer\n", threads.c_str(),
              mib.c_str());
  std::printf("output unchanged under memloupe: %s\n", plain.ok && traced.ok && plain.out == traced.out ? "yes" : "NO");
  print("pointers to one block:", snapshots_in(dir / "trace"));
  print("pointers scattered:   ", snapshots_in(dir / "scattered"));
  if (!scattered.ok) std::printf("the scattered run failed\n");
  std::printf("plain run              %7.2f s\n", plain.seconds);
  std::printf("memloupe --all run     %7.2f s  (%.2fx plain; 2 snapshots)\n", traced.seconds,
              traced.seconds / plain.seconds);
  std::printf("plain run (%s MiB)     %7.2f s\n", memcheck_mib.c_str(), memcheck_plain.seconds);
  std::printf("memcheck run (%s MiB)  %7.2f s  (%.1fx its plain run)%s\n", memcheck_mib.c_str(), memcheck.seconds,
              memcheck.seconds / memcheck_plain.seconds, memcheck.ok ? "" : "  [valgrind failed]");
  const double gib = std::stod(mib) / 1024, mc_gib = std::stod(memcheck_mib) / 1024;
  std::printf("per GiB of heap: memloupe run %.2f s, memcheck run %.2f s (memcheck / memloupe: %.1fx)\n",
              traced.seconds / gib, memcheck.seconds / mc_gib, (memcheck.seconds / mc_gib) / (traced.seconds / gib));
  fs::remove_all(dir);
  return plain.out == traced.out ? 0 : 1;
}
