#include "ctf/ctf_location.h"

#include <algorithm>
#include <string_view>

#include "ctf/ctf_wire.h"

namespace memloupe::reader::ctf {
namespace {

constexpr uint32_t kNotInList = kMtfSize;  // the code meaning "string follows"

// Moves list[i] to the front.
template <class T>
void to_front(std::vector<T>& list, size_t i) {
  std::rotate(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(i),
              list.begin() + static_cast<std::ptrdiff_t>(i) + 1);
}

// Pushes `entry` at the front, dropping the oldest entry if the list is full.
template <class T>
void push_front(std::vector<T>& list, T entry) {
  if (list.size() == kMtfSize) list.pop_back();
  list.insert(list.begin(), std::move(entry));
}

// Encoder side: the code for `name` in `list` (moving or pushing it to the front).
template <class T, class Name>
uint32_t mtf_encode(std::vector<T>& list, std::string_view name, Name name_of) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (name_of(list[i]) == name) {
      to_front(list, i);
      return static_cast<uint32_t>(i);
    }
  }
  return kNotInList;
}

std::string_view until_nul(std::string_view s) { return s.substr(0, s.find('\0')); }

}  // namespace

void LocationDecoder::decode(Cursor& in, uint64_t& code, std::vector<Location>& locs) {
  locs.clear();
  code = in.u64("location code");
  const uint8_t n = in.u8("location count");
  for (unsigned k = 0; k < n && !in.failed(); ++k) {
    const uint64_t at = in.offset();
    const uint64_t low = in.u32("location word");
    const uint64_t word = low | uint64_t{in.u16("location word")} << 32;
    Location loc;
    loc.line = word & kMaxLine;
    loc.start_char = (word >> 20) & kMaxStartChar;
    loc.end_char = (word >> 28) & kMaxEndChar;
    const uint32_t file_code = (word >> 38) & 0x1F;
    const uint32_t def_code = (word >> 43) & 0x1F;

    if (file_code == kNotInList) {
      std::string_view name = in.str("location file name");
      if (in.failed()) return;
      // As memtrace's reader: a new file inherits the defname list of the entry
      // it pushes out (an old encoder relied on this; current ones start new files
      // with an empty list, which decodes the same).
      std::vector<std::string> defnames;
      if (files_.size() == kMtfSize) defnames = std::move(files_.back().defnames);
      push_front(files_, FileEntry{std::string(name), std::move(defnames)});
    } else if (file_code < files_.size()) {
      to_front(files_, file_code);
    } else {
      in.fail_at(at, "location: file code " + std::to_string(file_code) +
                         " names an empty move-to-front slot");
      return;
    }
    FileEntry& file = files_.front();
    if (def_code == kNotInList) {
      std::string_view name = in.str("location function name");
      if (in.failed()) return;
      push_front(file.defnames, std::string(name));
    } else if (def_code < file.defnames.size()) {
      to_front(file.defnames, def_code);
    } else {
      in.fail_at(at, "location: function code " + std::to_string(def_code) +
                         " names an empty move-to-front slot");
      return;
    }
    loc.file = file.name;
    loc.defname = file.defnames.front();
    locs.push_back(std::move(loc));
  }
}

Location LocationEncoder::unknown() { return Location{"<unknown>", 1, 1, 1, "??"}; }

void LocationEncoder::encode(uint64_t code, std::span<const Location> locs, Out& out) {
  size_t worst = 8 + 1;
  for (const Location& loc : locs) {
    worst += 6 + until_nul(loc.file).size() + 1 + until_nul(loc.defname).size() + 1;
  }
  const Location fallback = unknown();
  if (locs.size() > 255 || worst > kMaxLocationBytes) locs = std::span(&fallback, 1);

  out.u64(code);
  out.u8(static_cast<uint8_t>(locs.size()));
  for (const Location& loc : locs) {
    const std::string_view file = until_nul(loc.file);
    const std::string_view defname = until_nul(loc.defname);
    uint32_t file_code =
        mtf_encode(files_, file, [](const FileEntry& e) -> std::string_view { return e.name; });
    if (file_code == kNotInList) push_front(files_, FileEntry{std::string(file), {}});
    auto& defnames = files_.front().defnames;
    uint32_t def_code =
        mtf_encode(defnames, defname, [](const std::string& s) -> std::string_view { return s; });
    if (def_code == kNotInList) push_front(defnames, std::string(defname));

    const uint64_t word = uint64_t{std::min(loc.line, kMaxLine)} |
                          uint64_t{std::min(loc.start_char, kMaxStartChar)} << 20 |
                          uint64_t{std::min(loc.end_char, kMaxEndChar)} << 28 |
                          uint64_t{file_code} << 38 | uint64_t{def_code} << 43;
    out.u32(static_cast<uint32_t>(word));
    out.u16(static_cast<uint16_t>(word >> 32));
    if (file_code == kNotInList) out.str(file);
    if (def_code == kNotInList) out.str(defname);
  }
}

const std::vector<OwnedFrame>* LocationTable::define(uint64_t code, const std::vector<Location>& locs) {
  auto [known, inserted] = locations_.try_emplace(code, locs);
  if (!inserted) return known->second == locs ? &symbols_.at(code) : nullptr;
  std::vector<OwnedFrame>& frames = symbols_[code];
  for (auto loc = locs.rbegin(); loc != locs.rend(); ++loc) {
    frames.push_back(OwnedFrame{loc->defname, loc->file, loc->line, loc->start_char});
  }
  return &frames;
}

}  // namespace memloupe::reader::ctf
