#include "analysis/frame_names.h"

#include <cstdio>

namespace memloupe::analysis {

const ModuleInfo* module_of(uint64_t address, const std::vector<ModuleInfo>& modules) {
  for (auto it = modules.rbegin(); it != modules.rend(); ++it) {
    if (address >= it->start && address < it->end) return &*it;
  }
  return nullptr;
}

std::string unknown_frame_name(uint64_t address, const std::vector<ModuleInfo>& modules) {
  char buf[40];
  const ModuleInfo* m = module_of(address, modules);
  if (m == nullptr) {
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(address));
    return buf;
  }
  const size_t slash = m->path.rfind('/');
  std::string name = slash == std::string::npos ? m->path : m->path.substr(slash + 1);
  std::snprintf(buf, sizeof buf, "+0x%llx", static_cast<unsigned long long>(address - m->load_bias));
  return name + buf;
}

std::vector<Frame> expand_address(uint64_t address, const reader::SymbolTable& symbols,
                                  const std::vector<ModuleInfo>& modules) {
  std::vector<Frame> out;
  const ModuleInfo* m = module_of(address, modules);
  const std::string module = m ? m->path : std::string();
  auto it = symbols.find(address);
  if (it != symbols.end()) {
    const std::vector<reader::OwnedFrame>& frames = it->second;
    for (size_t i = frames.size(); i-- > 0;) {
      const reader::OwnedFrame& f = frames[i];
      Frame v;
      v.function = f.function.empty() ? unknown_frame_name(address, modules) : f.function;
      v.file = f.file;
      v.line = f.line;
      v.column = f.column;
      v.address = address;
      v.module = module;
      v.symbolized = !f.function.empty();
      v.inlined = i != frames.size() - 1;
      out.push_back(std::move(v));
    }
  }
  if (out.empty()) {
    Frame v;
    v.function = unknown_frame_name(address, modules);
    v.address = address;
    v.module = module;
    out.push_back(std::move(v));
  }
  return out;
}

bool contains_any(std::string_view haystack, const std::vector<std::string>& needles) {
  for (const std::string& n : needles) {
    if (haystack.find(n) != std::string_view::npos) return true;
  }
  return false;
}

bool address_matches(uint64_t address, const reader::SymbolTable& symbols,
                     const std::vector<ModuleInfo>& modules, const std::vector<std::string>& needles) {
  auto it = symbols.find(address);
  if (it != symbols.end()) {
    for (const reader::OwnedFrame& f : it->second) {
      if (!f.function.empty() && contains_any(f.function, needles)) return true;
    }
    bool any_named = false;
    for (const reader::OwnedFrame& f : it->second) any_named |= !f.function.empty();
    if (any_named) return false;
  }
  return contains_any(unknown_frame_name(address, modules), needles);
}

namespace {

// "libc.so.6", "ld-linux-x86-64.so.2", "libfoo.so": the names shared objects
// are installed under (an executable's name has no ".so").
bool is_shared_object(std::string_view path) {
  const std::string_view name = path.substr(path.rfind('/') + 1);
  const size_t so = name.find(".so");
  return so != std::string_view::npos && (so + 3 == name.size() || name[so + 3] == '.');
}

// Where the distribution installs; /usr/local/ is the machine's own software.
bool in_system_directory(std::string_view path) {
  return (path.starts_with("/usr/") && !path.starts_with("/usr/local/")) || path.starts_with("/lib/") ||
         path.starts_with("/lib64/") || path.starts_with("/lib32/");
}

}  // namespace

bool is_library_frame(std::string_view file, std::string_view module, bool named) {
  const bool shared = module.empty() || is_shared_object(module);
  if (shared && in_system_directory(module)) return true;
  if (!file.empty()) return file.starts_with("/usr/");
  return shared || !named;
}

size_t first_own_frame(const std::vector<const Frame*>& frames) {
  for (size_t i = 0; i < frames.size(); ++i) {
    if (!is_library_frame(frames[i]->file, frames[i]->module, frames[i]->symbolized)) return i;
  }
  return 0;
}

std::optional<std::string_view> one_time_runtime_allocation(const std::vector<const Frame*>& frames) {
  for (const Frame* f : frames) {
    if (f->file.ends_with("eh_alloc.cc") || f->function.find("(anonymous namespace)::pool::pool") != std::string::npos) {
      return "libstdc++'s emergency exception pool";
    }
    if (f->function.starts_with("_dl_") || f->module.find("/ld-linux") != std::string::npos) return "the dynamic loader";
  }
  return std::nullopt;
}

}  // namespace memloupe::analysis
