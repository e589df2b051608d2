#include "types/finalize_types.h"

#include <map>
#include <numeric>

#include "types/infer_site.h"

namespace memloupe::types {
namespace {

// The candidate as the site's sizes allow it, or nothing (module comment).
std::optional<SiteType> agree(const Candidate& c, uint64_t min, uint64_t max, uint64_t gcd) {
  SiteType t{c.name, c.type_size, 0, TypeShape::Object, c.rule};
  if (c.rule == TypeRule::MakeShared) {
    if (min != max || min != c.block_size) return std::nullopt;
    t.block_size = c.block_size;
    return t;
  }
  if (min == max && min == c.type_size) {
    t.block_size = c.type_size;
    return t;
  }
  if (c.rule != TypeRule::Allocator || gcd % c.type_size != 0) return std::nullopt;
  t.shape = TypeShape::Array;
  t.name += "[]";
  return t;
}

}  // namespace

uint32_t TypesAddon::site_of(uint64_t address) {
  Slot& slot = recent_[(address ^ address >> 10) % kSlots];
  if (slot.index == 0 || slot.address != address) {
    auto [it, added] = sites_.try_emplace(address, static_cast<uint32_t>(sizes_.size()));
    if (added) sizes_.emplace_back();
    slot = {address, it->second + 1};
  }
  return slot.index - 1;
}

void TypesAddon::alloc(const format::Alloc& alloc, const reader::BacktraceKey& key) {
  if (alloc.backtrace.empty()) return;
  const uint32_t memo = key.addon_memo ? *key.addon_memo : 0;
  Sizes& s = sizes_[memo != 0 ? memo - 1 : site_of_key(alloc.backtrace[0], key)];
  // Most allocations leave the site's gcd as it is: the site's sizes have
  // no common divisor left (strings: (d)), or the size is the smallest or
  // largest so far (a site of one size: (a), (b)). Those are taken in here,
  // the rest out of line (this runs once per allocation of the trace, on the
  // follower's thread; with all of it inline, each allocation saved and
  // restored three registers). (The test of the smallest and largest first
  // costs (d) and (a) what it saves (b).)
  const uint64_t size = alloc.size;
  if (s.gcd == 1 || (s.gcd != 0 && (size == s.min || size == s.max))) [[likely]] return s.take(size);
  add_size(s, size);
}

uint32_t TypesAddon::site_of_key(uint64_t address, const reader::BacktraceKey& key) {
  const uint32_t site = site_of(address);
  if (key.addon_memo) *key.addon_memo = site + 1;
  return site;
}

void TypesAddon::add_size(Sizes& s, uint64_t size) {
  // A size that is a multiple of the gcd so far leaves it (one division
  // instead of Euclid's loop, for the many allocations of one size), and the
  // smallest and largest size seen are (no division, which costs tens of
  // cycles).
  if (s.gcd == 0 || (s.gcd != 1 && size != s.min && size != s.max && size % s.gcd != 0))
    s.gcd = std::gcd(s.gcd, size);
  s.take(size);
}

std::vector<std::pair<format::ChunkType, std::vector<uint8_t>>> TypesAddon::chunks(
    symbolize::Symbolizer& symbolizer, const symbolize::ModuleMap& modules,
    std::span<const symbolize::AddressInModule> addresses) {
  std::unordered_map<uint64_t, symbolize::ModuleIndex> module_of;
  module_of.reserve(addresses.size());
  for (const auto& a : addresses) module_of.emplace(a.address, a.module);
  // The sites of each opened file go to its inferrer in one batch (one walk
  // of each unit's DWARF for all of them).
  struct Batch {
    std::vector<uint64_t> addresses;
    std::vector<uint64_t> vaddrs;
  };
  std::map<symbolize::ElfFile*, Batch> batches;
  stats_.sites = sites_.size();
  for (const auto& [address, index] : sites_) {
    const Sizes& sizes = sizes_[index];
    stats_.bytes += sizes.bytes;
    if (sizes.min == 0) continue;  // malloc(0): no type to agree with
    auto m = module_of.find(address);
    if (m == module_of.end()) continue;
    const symbolize::Module& module = modules[m->second];
    if (address <= module.load_bias) continue;
    symbolize::ElfFile* file = symbolizer.file_for(module);
    if (file == nullptr) continue;
    Batch& batch = batches[file];
    batch.addresses.push_back(address);
    batch.vaddrs.push_back(address - module.load_bias);
  }
  for (auto& [file, batch] : batches) {
    SiteInferrer inferrer(file->module());
    const std::vector<std::vector<Candidate>> candidates = inferrer.candidates(batch.vaddrs);
    for (size_t i = 0; i < batch.addresses.size(); ++i) {
      const Sizes& sizes = sizes_[sites_.at(batch.addresses[i])];
      for (const Candidate& c : candidates[i]) {
        if (auto t = agree(c, sizes.min, sizes.max, sizes.gcd)) {
          table_.emplace(batch.addresses[i], std::move(*t));
          ++stats_.typed_sites;
          stats_.typed_bytes += sizes.bytes;
          break;
        }
      }
      if (!candidates[i].empty() && !table_.contains(batch.addresses[i])) ++stats_.rejected_sites;
    }
  }
  for (const auto& [address, index] : sites_) {
    const Sizes& sizes = sizes_[index];
    if (sizes.min == sizes.max && sizes.min != 0 && !table_.contains(address)) {
      table_.emplace(address, SiteType{{}, sizes.min, sizes.min, TypeShape::Object, TypeRule::Unknown});
    }
  }
  return {{format::ChunkType::Types, encode_types(table_)}};
}

}  // namespace memloupe::types
