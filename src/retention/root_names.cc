#include "retention/root_names.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>

namespace memloupe::retention {
namespace {

format::ThreadId thread_of(const reader::RawSnapshotRoot& r) {
  // A thread that never allocated has no id in the trace.
  return format::ThreadId{r.thread_plus_one == 0 ? UINT32_MAX : r.thread_plus_one - 1};
}

RootKind kind_of(format::SnapshotRoot k) { return static_cast<RootKind>(k); }

// The allocator's own state is not a root. glibc's main_arena points at chunk
// headers (the top chunk, the bins' free chunks), and a chunk's header shares
// the last 8 bytes of the block before it, so each such pointer looks like an
// interior pointer into a live block. memcheck, which replaces the allocator,
// never sees them.
bool allocator_state(const std::string& symbol, const std::string& module) {
  const std::string file = std::filesystem::path(module).filename().string();
  return symbol == "main_arena" && file.starts_with("libc.so");
}

}  // namespace

RootNamer::RootNamer(const symbolize::ModuleMap& modules, const reader::SymbolTable& symbols)
    : modules_(modules), symbols_(symbols), globals_(symbolizer_) {}

std::optional<format::SnapshotName> RootNamer::global_at(const reader::RawSnapshot& raw, uint64_t word) {
  if (raw.names.empty()) return globals_.name(modules_, word);
  auto it = std::upper_bound(raw.names.begin(), raw.names.end(), word,
                             [](uint64_t w, const reader::RawSnapshotName& n) { return w < n.address; });
  // The smallest name holding the word (a variable inside the section named
  // for the words around it).
  const reader::RawSnapshotName* best = nullptr;
  for (int back = 0; it != raw.names.begin() && back < 64; ++back) {
    --it;
    if (word - it->address < it->size && (best == nullptr || it->size < best->size)) best = &*it;
  }
  if (best == nullptr) return std::nullopt;
  return format::SnapshotName{best->address, best->size, best->name, best->file, best->line};
}

void RootNamer::name_frame(Root& root, uint64_t pc) {
  root.name = fmt::format("0x{:x}", pc);
  const auto m = modules_.find_any_time(pc);
  if (m) root.module = modules_[*m].path;
  // The pc of every frame but the innermost is a return address, which the
  // symboliser looks up at pc - 1 (the call); the innermost frame's exact pc
  // lies in the same function either way. The finaliser symbolised the frame
  // pcs into the trace's symbols section; older traces use the files.
  std::vector<reader::OwnedFrame> frames;
  if (auto it = symbols_.find(pc); it != symbols_.end()) {
    frames = it->second;
  } else if (m) {
    frames = symbolizer_.symbolize(modules_[*m], pc);
  }
  if (frames.empty()) return;
  const reader::OwnedFrame& f = frames.back();  // the function the frame belongs to
  root.name = f.function;
  root.file = f.file;
  root.line = f.line;
}

RootNamer::Named RootNamer::name(const reader::RawSnapshot& raw) {
  Named out;
  out.edge_root.assign(raw.edges.size(), UINT32_MAX);
  // Edges leaving each raw root, in order.
  std::vector<std::vector<size_t>> edges_of(raw.roots.size());
  for (size_t e = 0; e < raw.edges.size(); ++e)
    if (raw.edges[e].from < raw.roots.size()) edges_of[raw.edges[e].from].push_back(e);

  for (size_t r = 0; r < raw.roots.size(); ++r) {
    const reader::RawSnapshotRoot& rr = raw.roots[r];
    // A root that holds no pointer into the heap keeps nothing alive: left out.
    if (edges_of[r].empty()) continue;
    Root base;
    base.kind = kind_of(rr.kind);
    base.thread = thread_of(rr);
    base.address = rr.address;
    base.size = rr.size;
    if (rr.kind == format::SnapshotRoot::Stack) {
      name_frame(base, rr.pc);
    } else if (rr.kind == format::SnapshotRoot::Register) {
      base.name = "registers";
    } else if (rr.kind == format::SnapshotRoot::Tls) {
      // pc: the module whose static TLS block this is; 0 for the thread's
      // descriptor (format/snapshot_wire.h).
      base.name = rr.pc == 0 ? "thread descriptor" : "tls";
      if (const auto m = rr.pc ? modules_.find_any_time(rr.pc) : std::nullopt) base.module = modules_[*m].path;
    }
    if (rr.kind != format::SnapshotRoot::Global) {
      const auto index = static_cast<uint32_t>(out.roots.size());
      out.roots.push_back(std::move(base));
      for (size_t e : edges_of[r]) out.edge_root[e] = index;
      continue;
    }
    // A global segment: one root per variable (or section remainder) holding a pointer.
    std::map<std::pair<uint64_t, std::string>, uint32_t> by_global;  // within this segment
    for (size_t e : edges_of[r]) {
      const uint64_t word = rr.address + raw.edges[e].offset;
      Root root = base;
      if (const auto m = modules_.find_any_time(word)) root.module = modules_[*m].path;
      if (const auto g = global_at(raw, word)) {
        if (allocator_state(g->name, root.module)) {
          out.edge_root[e] = kNotARoot;
          continue;
        }
        root.name = g->name;
        root.file = g->file;
        root.line = g->line;
        root.address = g->address;
        root.size = g->size;
      } else {
        root.name = fmt::format("0x{:x}", word);
        root.address = word;
        root.size = 8;
      }
      auto [it, fresh] = by_global.emplace(std::pair(root.address, root.name), static_cast<uint32_t>(out.roots.size()));
      if (fresh) out.roots.push_back(std::move(root));
      out.edge_root[e] = it->second;
    }
  }
  return out;
}

}  // namespace memloupe::retention
