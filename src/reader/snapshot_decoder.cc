#include "reader/snapshot_decoder.h"

#include <algorithm>
#include <map>
#include <optional>

#include "format/chunk.h"
#include "format/snapshot_writer.h"
#include "format/varint.h"
#include "format/wire.h"
#include "reader/chunk_io.h"
#include "reader/cursor.h"

namespace memloupe::reader {
namespace {

using format::SnapshotPart;

// A snapshot being assembled, with what its End part must confirm.
struct Open {
  RawSnapshot snap;
  uint64_t prev_edge_from = 0;
  bool failed = false;
};

class Decoder {
 public:
  // One chunk's payload; false with `error` set on damage (the snapshot the
  // damaged part belongs to is dropped; the chunk's other parts are lost too).
  std::optional<Error> chunk(Cursor cur, uint64_t chunk_offset) {
    while (!cur.at_end()) {
      uint8_t kind;
      uint32_t number;
      if (!cur.u8(kind) || kind > static_cast<uint8_t>(SnapshotPart::Named))
        return cur.expected("a snapshot part kind (0..10)");
      if (!cur.varint_max(number, UINT32_MAX)) return cur.expected("a snapshot number");
      if (static_cast<SnapshotPart>(kind) == SnapshotPart::Names) {
        if (auto e = names(cur, number)) return e;
        continue;
      }
      if (kind > static_cast<uint8_t>(SnapshotPart::Names)) {
        auto it = std::find_if(done_.begin(), done_.end(), [&](const RawSnapshot& s) { return s.number == number; });
        // The annex of a snapshot that was dropped, of one whose annex was
        // found damaged (reported then), or a second one without a Names
        // part: the rest of this chunk is its (a chunk holds one snapshot's parts).
        if (it == done_.end() || annex_[number].failed || it->annexed) return std::nullopt;
        if (auto e = annex(static_cast<SnapshotPart>(kind), cur, *it)) return e;
        continue;
      }
      if (static_cast<SnapshotPart>(kind) == SnapshotPart::Begin) {
        Open& o = open_[number];
        o = Open{};
        o.snap.number = number;
        o.snap.offset = chunk_offset;
        std::string_view label;
        uint8_t at_exit;
        if (!cur.varint(o.snap.time_ns) || !cur.u8(at_exit) || !cur.string(label, 4096) ||
            !cur.varint_max(o.snap.threads, UINT32_MAX) || !cur.varint_max(o.snap.threads_not_stopped, UINT32_MAX))
          return fail(number, cur.expected("a snapshot's begin part (time, at_exit, label, thread counts)"));
        o.snap.at_exit = at_exit != 0;
        o.snap.label = label;
        continue;
      }
      auto it = open_.find(number);
      // A snapshot already found damaged: the rest of this chunk is its (each
      // chunk holds the parts of one snapshot), and was reported.
      if (it != open_.end() && it->second.failed) return std::nullopt;
      if (it == open_.end()) {
        Open& lost = open_[number];
        lost.failed = true;
        return cur.expected("a part of snapshot " + std::to_string(number) +
                            ", whose begin part was not read (its chunk is damaged or missing)");
      }
      Open& o = it->second;
      if (auto e = part(static_cast<SnapshotPart>(kind), cur, o)) return fail(number, *e);
      if (static_cast<SnapshotPart>(kind) == SnapshotPart::End) {
        done_.push_back(std::move(o.snap));
        open_.erase(it);
      }
    }
    return std::nullopt;
  }

  RawSnapshots finish(std::string damage) {
    for (auto& [number, o] : open_)
      if (!o.failed) add_damage(damage, "snapshot " + std::to_string(number) + " (at offset " +
                                            std::to_string(o.snap.offset) + ") has no end part: it was cut short");
    std::sort(done_.begin(), done_.end(), [](const RawSnapshot& a, const RawSnapshot& b) { return a.number < b.number; });
    return {std::move(done_), std::move(damage)};
  }

 private:
  std::optional<Error> part(SnapshotPart kind, Cursor& cur, Open& o) {
    RawSnapshot& s = o.snap;
    if (kind == SnapshotPart::End) {
      uint64_t roots, blocks, edges;
      if (!cur.varint(roots) || !cur.varint(blocks) || !cur.varint(edges) || !cur.varint(s.bytes_scanned) ||
          !cur.varint(s.stopped_ns))
        return cur.expected("a snapshot's end part (root, block and edge totals, bytes scanned, time stopped)");
      if (roots != s.roots.size() || blocks != s.blocks.size() || edges != s.edges.size())
        return cur.expected(std::to_string(roots) + " roots, " + std::to_string(blocks) + " blocks and " +
                            std::to_string(edges) + " edges as the end part says, found " +
                            std::to_string(s.roots.size()) + ", " + std::to_string(s.blocks.size()) + " and " +
                            std::to_string(s.edges.size()) + " (a part is missing)");
      return std::nullopt;
    }
    uint32_t n;
    if (!cur.u32(n)) return cur.expected("a part's item count");
    // Every item takes at least 2 bytes: a count beyond that is damage, and
    // nothing is reserved in proportion to an unchecked number.
    if (n > cur.remaining() / 2) return cur.expected("an item count that fits in the chunk");
    uint64_t prev = 0;
    for (uint32_t i = 0; i < n; ++i) {
      if (kind == SnapshotPart::Roots) {
        if (!s.blocks.empty() || !s.edges.empty()) return cur.expected("roots before blocks and edges");
        RawSnapshotRoot r;
        uint8_t k;
        if (!cur.u8(k) || k > static_cast<uint8_t>(format::SnapshotRoot::Tls) ||
            !cur.varint_max(r.thread_plus_one, UINT32_MAX) || !cur.varint_max(r.os_tid, UINT32_MAX) ||
            !cur.varint(r.address) || !cur.varint(r.size) || !cur.varint(r.pc))
          return cur.expected("a root (kind 0..3, thread, tid, address, size, pc)");
        r.kind = static_cast<format::SnapshotRoot>(k);
        s.roots.push_back(r);
      } else if (kind == SnapshotPart::Blocks) {
        if (!s.edges.empty()) return cur.expected("blocks before edges");
        RawSnapshotBlock b;
        uint64_t delta;
        if (!cur.varint(delta) || !cur.varint(b.extent) || !cur.varint(b.alloc_id))
          return cur.expected("a block (address delta, size, alloc id)");
        b.address = prev + delta;
        const uint64_t last_end = s.blocks.empty() ? 0 : s.blocks.back().address + s.blocks.back().extent;
        if ((!s.blocks.empty() && (delta == 0 || b.address < last_end)) || b.address < prev)
          return cur.expected("blocks in ascending address order, not overlapping");
        prev = b.address;
        s.blocks.push_back(b);
      } else {
        RawSnapshotEdge e;
        uint64_t delta, to;
        if (!cur.varint(delta) || !cur.varint(to)) return cur.expected("an edge (from delta, to)");
        const uint64_t from = prev + delta;
        if (from >= s.roots.size() + s.blocks.size() || (to >> 1) >= s.blocks.size())
          return cur.expected("an edge between nodes of the snapshot (" + std::to_string(s.roots.size()) +
                              " roots, " + std::to_string(s.blocks.size()) + " blocks)");
        if (from < o.prev_edge_from) return cur.expected("edges in ascending order of their source");
        e.from = static_cast<uint32_t>(from);
        e.to = static_cast<uint32_t>(to >> 1);
        e.interior = (to & 1) != 0;
        if (from < s.roots.size() && !cur.varint(e.offset)) return cur.expected("the edge's word offset");
        if (from < s.roots.size() && e.offset + 8 > s.roots[from].size)
          return cur.expected("a word offset inside its root");
        prev = from;
        o.prev_edge_from = from;
        s.edges.push_back(e);
      }
    }
    return std::nullopt;
  }

  // A Names part: it belongs to a snapshot already complete (it follows End).
  std::optional<Error> names(Cursor& cur, uint32_t number) {
    auto it = std::find_if(done_.begin(), done_.end(), [&](const RawSnapshot& s) { return s.number == number; });
    uint32_t n;
    if (!cur.u32(n) || n > cur.remaining() / 5) return cur.expected("a names part's count");
    std::vector<RawSnapshotName> out;
    for (uint32_t i = 0; i < n; ++i) {
      RawSnapshotName name;
      std::string_view text, file;
      if (!cur.varint(name.address) || !cur.varint(name.size) || !cur.string(text, 4096) || !cur.string(file, 4096) ||
          !cur.varint_max(name.line, UINT32_MAX))
        return cur.expected("a named global (address, size, name, file, line)");
      if (!out.empty() && name.address < out.back().address) return cur.expected("names in address order");
      name.name = text;
      name.file = file;
      out.push_back(std::move(name));
    }
    // Names of a snapshot that was dropped (damaged) name nothing.
    if (it != done_.end()) {
      it->names = std::move(out);
      clear_annex(*it);  // a new annex starts
      annex_.erase(number);
    }
    return std::nullopt;
  }

  static void clear_annex(RawSnapshot& s) {
    s.annexed = false;
    s.stacks.clear();
    s.sites.clear();
    s.modules.clear();
    s.thread_names.clear();
  }

  // A part of the annex after the Names part. Damage here costs the annex
  // (the events name the blocks instead), not the snapshot.
  std::optional<Error> annex(SnapshotPart kind, Cursor& cur, RawSnapshot& s) {
    std::optional<Error> e = annex_part(kind, cur, s);
    if (e) {
      clear_annex(s);
      annex_[s.number].failed = true;
      e->message = "snapshot " + std::to_string(s.number) +
                   "'s annex (its blocks' sites; the events are read instead): " + e->message;
    }
    return e;
  }

  static std::optional<Error> annex_part(SnapshotPart kind, Cursor& cur, RawSnapshot& s) {
    if (kind == SnapshotPart::Named) {
      uint64_t stacks, sites, modules, threads;
      if (!cur.varint(stacks) || !cur.varint(sites) || !cur.varint(modules) || !cur.varint(threads))
        return cur.expected("the annex's totals (stacks, sites, modules, threads)");
      if (stacks != s.stacks.size() || sites != s.sites.size() || modules != s.modules.size() ||
          threads != s.thread_names.size() || sites != s.blocks.size())
        return cur.expected(std::to_string(stacks) + " stacks, " + std::to_string(sites) + " sites, " +
                            std::to_string(modules) + " modules and " + std::to_string(threads) +
                            " threads as the annex's totals say, one site per block (" +
                            std::to_string(s.blocks.size()) + "); found " + std::to_string(s.stacks.size()) + ", " +
                            std::to_string(s.sites.size()) + ", " + std::to_string(s.modules.size()) + " and " +
                            std::to_string(s.thread_names.size()) + " (a part is missing)");
      s.annexed = true;
      return std::nullopt;
    }
    uint32_t n;
    // Every item takes at least a byte.
    if (!cur.u32(n) || n > cur.remaining()) return cur.expected("an annex part's item count that fits in the chunk");
    for (uint32_t i = 0; i < n; ++i) {
      if (kind == SnapshotPart::Stacks) {
        uint32_t depth;
        if (!cur.varint_max(depth, format::SnapshotWriter::kMaxAnnexFrames))
          return cur.expected("a stack's depth (at most 256)");
        std::vector<uint64_t>& frames = s.stacks.emplace_back(depth);
        for (uint64_t& f : frames)
          if (!cur.varint(f)) return cur.expected("a stack's return address");
      } else if (kind == SnapshotPart::Sites) {
        RawSnapshotSite site;
        if (!cur.varint_max(site.stack_plus_one, s.stacks.size()) ||
            (site.stack_plus_one != 0 && !cur.varint(site.size)))
          return cur.expected("a block's site (a stack of the annex, the requested size)");
        if (s.sites.size() == s.blocks.size()) return cur.expected("no more sites than blocks");
        s.sites.push_back(site);
      } else if (kind == SnapshotPart::Modules) {
        RawSnapshotModule& m = s.modules.emplace_back();
        std::string_view path;
        std::span<const uint8_t> id;
        uint32_t id_size;
        if (!cur.varint(m.start) || !cur.varint(m.end) || !cur.varint(m.load_bias) || !cur.string(path, 4096) ||
            !cur.varint_max(id_size, 64) || !cur.bytes(id_size, id))
          return cur.expected("a module (start, end, load bias, path, build id)");
        m.path = path;
        m.build_id.assign(id.begin(), id.end());
      } else {
        RawSnapshotThread& t = s.thread_names.emplace_back();
        std::string_view name;
        if (!cur.varint_max(t.id, UINT32_MAX) || !cur.varint_max(t.os_tid, UINT32_MAX) || !cur.string(name, 4096))
          return cur.expected("a thread (id, os tid, name)");
        t.name = name;
      }
    }
    return std::nullopt;
  }

  std::optional<Error> fail(uint32_t number, Error e) {
    auto it = open_.find(number);
    if (it != open_.end()) {
      it->second.failed = true;
      it->second.snap = RawSnapshot{};  // its memory, and no later part attaches to it
    }
    e.message = "snapshot " + std::to_string(number) + ": " + e.message;
    return e;
  }
  std::map<uint32_t, Open> open_;
  std::vector<RawSnapshot> done_;
  struct AnnexState {
    bool failed = false;  // until the next Names part
  };
  std::map<uint32_t, AnnexState> annex_;
};

}  // namespace

void add_damage(std::string& all, const std::string& one) {
  if (!all.empty()) all += "; ";
  all += one;
}

RawSnapshots decode_snapshots(std::span<const uint8_t> file) {
  Decoder d;
  std::string damage;
  if (auto v = check_prologue(file); !v) return {{}, v.error().message};
  std::vector<uint8_t> buffer;
  // Hop from chunk header to chunk header, as the symbols section is found: a
  // chunk with an intact header and a damaged payload is stepped over, so the
  // snapshots after it survive.
  // Where the chain of headers breaks, nothing after it can be trusted to be a
  // chunk boundary; the reader reports that damage for the events.
  walk_chunks(file, format::kPrologueSize, file.size(), BrokenHeader::Stop, [&](const ChunkHop& hop) {
    if (!hop.is(format::ChunkType::Snapshot)) return true;
    const uint64_t at = hop.offset;
    auto chunk = read_chunk(file, at);
    if (!chunk) {
      add_damage(damage, "a snapshot chunk is damaged: " + chunk.error().message);
      return true;
    }
    auto payload = chunk_payload(*chunk, buffer);
    if (!payload) {
      add_damage(damage, "a snapshot chunk is damaged: " + payload.error().message);
      return true;
    }
    const bool compressed = (chunk->flags & format::kChunkZstd) != 0;
    Cursor cur(*payload, compressed ? at : at + format::kChunkHeaderSize, compressed);
    if (auto e = d.chunk(cur, at)) add_damage(damage, e->message);
    return true;
  });
  return d.finish(std::move(damage));
}

}  // namespace memloupe::reader
