#include "report/retention_names.h"

#include <unordered_map>

#include "analysis/frame_names.h"
#include "analysis/type_counts.h"
#include "report/text_sites.h"

namespace memloupe::report {

const char* root_kind_name(retention::RootKind kind) {
  switch (kind) {
    case retention::RootKind::Global: return "global";
    case retention::RootKind::Stack: return "stack";
    case retention::RootKind::Register: return "register";
    case retention::RootKind::Tls: return "tls";
  }
  return "?";
}

RetentionNames::RetentionNames(const retention::HeapSnapshot& s, const analysis::AllocStacks& stacks,
                               const SiteStyle& style, const types::TypeTable* types)
    : style_(style) {
  const std::vector<analysis::ModuleInfo>& modules = stacks.overview.modules;
  std::unordered_map<uint32_t, uint32_t> site_of_stack;
  std::unordered_map<std::string, uint32_t> site_of_key;
  std::unordered_map<std::string, uint32_t> type_of_name;
  site_of_block_.assign(s.blocks.size(), kUnknownSite);
  type_of_block_.assign(s.blocks.size(), {});
  auto type_row = [&](const types::SiteType* t) {
    auto [it, added] = type_of_name.emplace(analysis::type_row_name(t), static_cast<uint32_t>(types_.size()));
    if (added) {
      const bool known = t != nullptr && t->rule != types::TypeRule::Unknown;
      types_.push_back({it->first, known, known ? t->type_size : 0});
    }
    return it->second;
  };
  for (size_t b = 0; b < s.blocks.size(); ++b) {
    auto st = stacks.stack_of.find(s.blocks[b].alloc.value);
    // The type of the block's site, if its size agrees (as type_counts.h counts).
    const auto frames = st == stacks.stack_of.end() ? std::span<const uint64_t>() : stacks.stacks.frames(st->second);
    const types::SiteType* t = nullptr;
    if (types != nullptr && !frames.empty()) {
      if (auto it = types->find(frames[0]); it != types->end()) t = &it->second;
    }
    const uint64_t objects = t ? t->objects_in(s.blocks[b].size) : 0;
    type_of_block_[b] = {type_row(objects ? t : nullptr), objects && t->rule != types::TypeRule::Unknown ? objects : 1};
    if (st == stacks.stack_of.end()) continue;
    auto known = site_of_stack.find(st->second);
    if (known != site_of_stack.end()) {
      site_of_block_[b] = known->second;
      continue;
    }
    RetentionSite site;
    for (uint64_t address : stacks.stacks.frames(st->second)) {
      std::vector<analysis::Frame> expanded = analysis::expand_address(address, stacks.symbols, modules);
      for (size_t i = expanded.size(); i-- > 0;) {  // expand_address gives outermost first
        site.key += (site.key.empty() ? "" : ";") + expanded[i].function;
        site.frames.push_back(std::move(expanded[i]));
      }
    }
    if (style_.depth != 0 && site.frames.size() > style_.depth) {
      site.frames.resize(style_.depth);
      site.key.clear();
      for (const analysis::Frame& f : site.frames) site.key += (site.key.empty() ? "" : ";") + f.function;
    }
    auto [it, added] = site_of_key.emplace(site.key, static_cast<uint32_t>(sites_.size()));
    if (added) sites_.push_back(std::move(site));
    site_of_stack.emplace(st->second, it->second);
    site_of_block_[b] = it->second;
  }
  for (const analysis::ThreadInfo& t : stacks.overview.threads) {
    std::string label = "thread " + std::to_string(t.id.value);
    if (!t.name.empty()) label += " (" + t.name + ")";
    threads_.push_back(std::move(label));
  }
}

StackLines RetentionNames::lines(uint32_t site, size_t frames) const {
  const std::vector<analysis::Frame>& f = sites_[site].frames;
  std::vector<std::string> labels;
  std::vector<const analysis::Frame*> pointers;
  for (const analysis::Frame& frame : f) {
    labels.push_back(frame_label(frame, style_.full_names));
    pointers.push_back(&frame);
  }
  return stack_lines(labels, analysis::first_own_frame(pointers), frames, style_.all_frames);
}

std::string RetentionNames::site_label(uint32_t site) const {
  if (site == kUnknownSite || sites_[site].frames.empty()) return "(unknown site)";
  return lines(site, 1).leaf;
}

std::vector<std::string> RetentionNames::site_callers(uint32_t site, size_t frames) const {
  if (site == kUnknownSite || sites_[site].frames.empty()) return {};
  return lines(site, frames).notes;
}

std::string RetentionNames::thread_label(format::ThreadId thread) const {
  if (thread.value < threads_.size()) return threads_[thread.value];
  return "thread " + std::to_string(thread.value);
}

std::string RetentionNames::root_label(const retention::Root& root) const {
  const std::string name = function_label(root.name, style_.full_names);
  if (root.kind == retention::RootKind::Global) return name;
  return name + " [" + thread_label(root.thread) + "]";
}

std::string RetentionNames::root_where(const retention::Root& root) const {
  std::string out;
  if (!root.module.empty()) {
    const size_t slash = root.module.rfind('/');
    out = slash == std::string::npos ? root.module : root.module.substr(slash + 1);
  }
  if (!root.file.empty()) {
    out += (out.empty() ? "" : "  ") + root.file;
    if (root.line) out += ":" + std::to_string(root.line);
  }
  return out;
}

}  // namespace memloupe::report
