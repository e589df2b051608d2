#include "symbolize/module_map.h"

namespace memloupe::symbolize {

void ModuleMap::load(const format::ModuleLoad& event) {
  if (event.end <= event.start) return;  // an empty range can hold no address
  const ModuleIndex index{static_cast<uint32_t>(modules_.size())};
  modules_.push_back(Module{std::string(event.path),
                            std::vector<uint8_t>(event.build_id.begin(), event.build_id.end()),
                            event.start, event.end, event.load_bias});
  // Whatever overlaps the new range is no longer mapped there (its unload
  // event may be missing, e.g. after a crash of the recorder's module scan).
  auto it = mapped_.lower_bound(event.start);
  if (it != mapped_.begin() && modules_[std::prev(it)->second.value].end > event.start) --it;
  while (it != mapped_.end() && it->first < event.end) it = mapped_.erase(it);
  mapped_[event.start] = index;
}

void ModuleMap::unload(uint64_t start) { mapped_.erase(start); }

std::optional<ModuleIndex> ModuleMap::find(uint64_t address) const {
  auto it = mapped_.upper_bound(address);
  if (it == mapped_.begin()) return std::nullopt;
  --it;
  if (address >= modules_[it->second.value].end) return std::nullopt;
  return it->second;
}

std::optional<ModuleIndex> ModuleMap::find_any_time(uint64_t address) const {
  for (size_t i = modules_.size(); i-- > 0;) {
    if (address >= modules_[i].start && address < modules_[i].end) {
      return ModuleIndex{static_cast<uint32_t>(i)};
    }
  }
  return std::nullopt;
}

}  // namespace memloupe::symbolize
