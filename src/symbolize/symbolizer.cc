#include "symbolize/symbolizer.h"

#include <algorithm>

namespace memloupe::symbolize {
namespace {

// Pseudo-modules with no file behind them ("linux-vdso.so.1", "[heap]").
bool has_no_file(const std::string& path) {
  return path.empty() || path.front() == '[' || path.find("vdso") != std::string::npos;
}

// A return address recorded in `m` lies in its file's code only above the
// load bias; its pc there is the call before it, as an ELF virtual address.
bool in_file(const Module& m, uint64_t return_address) { return return_address > m.load_bias; }
uint64_t file_pc(const Module& m, uint64_t return_address) { return return_address - 1 - m.load_bias; }

}  // namespace

Symbolizer::Symbolizer(SymbolizerOptions options) : options_(std::move(options)) {}

ElfFile* Symbolizer::file_for(const Module& module) { return open(module, true); }

ElfFile* Symbolizer::open(const Module& module, bool warn) {
  Key key(module.path, module.build_id);
  auto it = files_.find(key);
  if (it != files_.end()) {
    if (warn && !untold_.empty()) {
      if (auto u = untold_.find(key); u != untold_.end()) {
        if (options_.warn) options_.warn(u->second);
        untold_.erase(u);
      }
    }
    return it->second.get();
  }

  std::unique_ptr<ElfFile> file;
  if (!has_no_file(module.path)) {
    auto opened = ElfFile::open(module.path, module.build_id, options_.debug_root, options_.inflated.get());
    if (opened) {
      file = std::move(*opened);
    } else {
      std::string message = "cannot symbolise " + module.path + ": " + opened.error().message;
      if (!warn) {
        untold_.emplace(key, std::move(message));
      } else if (options_.warn) {
        options_.warn(message);
      }
    }
  }
  return files_.emplace(std::move(key), std::move(file)).first->second.get();
}

std::vector<std::vector<reader::OwnedFrame>> Symbolizer::symbolize(
    const ModuleMap& modules, std::span<const AddressInModule> addresses) {
  return symbolize(modules, addresses, true);
}

std::vector<std::vector<reader::OwnedFrame>> Symbolizer::symbolize_quietly(
    const ModuleMap& modules, std::span<const AddressInModule> addresses) {
  return symbolize(modules, addresses, false);
}

void Symbolizer::tell(const ModuleMap& modules, std::span<const AddressInModule> addresses) {
  for (const AddressInModule& a : addresses)
    if (const Module& m = modules[a.module]; in_file(m, a.address)) file_for(m);
}

std::vector<std::vector<reader::OwnedFrame>> Symbolizer::symbolize(
    const ModuleMap& modules, std::span<const AddressInModule> addresses, bool warn) {
  std::vector<std::vector<reader::OwnedFrame>> out(addresses.size());
  // Batch per file: every load of one file shares its session and its pcs
  // are ELF virtual addresses.
  std::map<ElfFile*, std::vector<size_t>> by_file;
  for (size_t i = 0; i < addresses.size(); ++i) {
    const Module& m = modules[addresses[i].module];
    if (!in_file(m, addresses[i].address)) continue;
    if (ElfFile* file = open(m, warn)) by_file[file].push_back(i);
  }
  std::vector<uint64_t> pcs;
  for (auto& [file, members] : by_file) {
    pcs.clear();
    for (size_t i : members) {
      pcs.push_back(file_pc(modules[addresses[i].module], addresses[i].address));
    }
    auto frames = file->frames(pcs);
    for (size_t k = 0; k < members.size(); ++k) out[members[k]] = std::move(frames[k]);
  }
  return out;
}

std::vector<reader::OwnedFrame> Symbolizer::symbolize(const Module& module, uint64_t return_address) {
  ElfFile* file = file_for(module);
  if (file == nullptr || !in_file(module, return_address)) return {};
  const uint64_t pc = file_pc(module, return_address);
  return std::move(file->frames({&pc, 1})[0]);
}

size_t Symbolizer::files_opened() const {
  return static_cast<size_t>(std::ranges::count_if(files_, [](auto& f) { return f.second != nullptr; }));
}

size_t Symbolizer::modules_unusable() const { return files_.size() - files_opened(); }

namespace {

void add_frames(std::span<const AddressInModule> addresses, std::vector<std::vector<reader::OwnedFrame>> frames,
                reader::SymbolTable& out) {
  out.reserve(out.size() + addresses.size());
  for (size_t i = 0; i < addresses.size(); ++i) {
    if (!frames[i].empty()) out.emplace(addresses[i].address, std::move(frames[i]));
  }
}

}  // namespace

void symbolize_all(Symbolizer& symbolizer, const ModuleMap& modules,
                   std::span<const AddressInModule> addresses, reader::SymbolTable& out) {
  add_frames(addresses, symbolizer.symbolize(modules, addresses), out);
}

void symbolize_all_quietly(Symbolizer& symbolizer, const ModuleMap& modules,
                           std::span<const AddressInModule> addresses, reader::SymbolTable& out) {
  add_frames(addresses, symbolizer.symbolize_quietly(modules, addresses), out);
}

}  // namespace memloupe::symbolize
