#include "symbolize/inflated_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>

#include "format/crc32c.h"
#include "format/write_all.h"
#include "symbolize/elf_file.h"

namespace memloupe::symbolize {
namespace {

// What follows an entry's ELF bytes. Native byte order: the cache is this
// machine's; an entry from another (or a future format) fails the magic.
struct Trailer {
  char magic[8];
  uint64_t elf_size;  // of the entry's bytes (a globals table's too)
  uint64_t source_size;
  int64_t source_mtime_ns;
  uint32_t crc;  // CRC-32C of the ELF bytes
  uint32_t zero;
};
constexpr char kMagic[8] = {'M', 'L', 'I', 'N', 'F', 'L', '0', '1'};

// A file's bytes, mapped read-only.
class Mapping {
 public:
  Mapping(int fd, size_t size)
      : size_(size), data_(size == 0 ? MAP_FAILED : mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0)) {}
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (data_ != MAP_FAILED) munmap(data_, size_);
  }
  const uint8_t* bytes() const { return data_ == MAP_FAILED ? nullptr : static_cast<const uint8_t*>(data_); }

 private:
  size_t size_;
  void* data_;
};

// `path` and its missing parents made 0700 (std::filesystem's would be 0777
// less the umask).
bool make_folder(const std::filesystem::path& path) {
  std::filesystem::path prefix;
  for (const std::filesystem::path& part : path) {
    prefix /= part;
    struct stat st;
    if (mkdir(prefix.c_str(), 0700) != 0 && (stat(prefix.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))) return false;
  }
  return true;
}

// Whether the entry open at `fd` is intact and made from `source`; its bytes
// (before the trailer) copied into `bytes` if given.
bool entry_matches(int fd, const InflatedSource& source, std::vector<uint8_t>* bytes = nullptr) {
  struct stat st;
  // A trailer alone is an entry: a module's empty globals table.
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) < sizeof(Trailer)) return false;
  const Mapping map(fd, static_cast<size_t>(st.st_size));
  if (map.bytes() == nullptr) return false;
  Trailer t;
  const size_t elf_size = static_cast<size_t>(st.st_size) - sizeof t;
  std::memcpy(&t, map.bytes() + elf_size, sizeof t);
  if (std::memcmp(t.magic, kMagic, sizeof kMagic) != 0 || t.elf_size != elf_size || t.source_size != source.size ||
      t.source_mtime_ns != source.mtime_ns || t.zero != 0 || format::crc32c(map.bytes(), elf_size) != t.crc)
    return false;
  if (bytes != nullptr) bytes->assign(map.bytes(), map.bytes() + elf_size);
  return true;
}

}  // namespace

int64_t mtime_ns(const struct stat& st) { return int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec; }

InflatedSource InflatedSource::of(std::vector<uint8_t> build_id, const struct stat& st) {
  return {.build_id = std::move(build_id), .size = static_cast<uint64_t>(st.st_size), .mtime_ns = symbolize::mtime_ns(st)};
}

std::optional<std::filesystem::path> InflatedCache::folder_from_environment(
    const std::function<const char*(const char*)>& lookup) {
  const auto set = [&](const char* name) -> std::optional<std::string_view> {
    const char* v = lookup(name);
    return v != nullptr ? std::optional<std::string_view>(v) : std::nullopt;
  };
  if (const auto own = set("MEMLOUPE_CACHE_DIR")) {
    if (own->empty() || *own == "off") return std::nullopt;
    return std::filesystem::path(*own) / "inflated";
  }
  // As the XDG spec says: a relative or empty XDG_CACHE_HOME is ignored.
  if (const auto xdg = set("XDG_CACHE_HOME"); xdg && !xdg->empty() && xdg->front() == '/')
    return std::filesystem::path(*xdg) / "memloupe" / "inflated";
  if (const auto home = set("HOME"); home && !home->empty())
    return std::filesystem::path(*home) / ".cache" / "memloupe" / "inflated";
  return std::nullopt;
}

std::optional<InflatedCache> InflatedCache::from_environment() {
  std::optional<InflatedCache> cache;
  if (auto folder = folder_from_environment(std::getenv)) cache.emplace(std::move(*folder));
  return cache;
}

InflatedCache::InflatedCache(std::filesystem::path folder, uint64_t bound)
    : folder_(std::move(folder)), bound_(bound) {}

std::filesystem::path InflatedCache::entry(const InflatedSource& source, std::string_view kind) const {
  return folder_ / (hex(source.build_id) + "-" + std::to_string(source.size) + "-" +
                    std::to_string(source.mtime_ns) + std::string(kind));
}

format::UniqueFd InflatedCache::open_entry(const std::filesystem::path& path, const InflatedSource& source,
                                           std::vector<uint8_t>* bytes) const {
  format::UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return {};
  if (!entry_matches(fd.get(), source, bytes)) {
    // Another command may have renamed a good entry over it meanwhile: it
    // is made again, at the cost of one inflating (or walk).
    unlink(path.c_str());
    return {};
  }
  futimens(fd.get(), nullptr);  // used now (keep_under_bound keeps it longer)
  return fd;
}

format::UniqueFd InflatedCache::find(const InflatedSource& source) const { return open_entry(entry(source), source); }

bool InflatedCache::store(const InflatedSource& source, int image) const {
  struct stat st;
  if (fstat(image, &st) != 0 || st.st_size <= 0) return false;
  const auto size = static_cast<size_t>(st.st_size);
  const Mapping map(image, size);
  return map.bytes() != nullptr && write_entry(entry(source), source, {map.bytes(), size});
}

std::optional<std::vector<uint8_t>> InflatedCache::find_globals(const InflatedSource& source) const {
  std::vector<uint8_t> table;
  if (!open_entry(entry(source, kGlobals), source, &table)) return std::nullopt;
  return table;
}

bool InflatedCache::store_globals(const InflatedSource& source, std::span<const uint8_t> table) const {
  return write_entry(entry(source, kGlobals), source, table);
}

bool InflatedCache::write_entry(const std::filesystem::path& path, const InflatedSource& source,
                                std::span<const uint8_t> bytes) const {
  if (!make_folder(folder_)) return false;
  Trailer t{};
  std::memcpy(t.magic, kMagic, sizeof kMagic);
  t.elf_size = bytes.size();
  t.source_size = source.size;
  t.source_mtime_ns = source.mtime_ns;
  t.crc = format::crc32c(bytes.data(), bytes.size());

  std::string temporary = (folder_ / "tmp.XXXXXX").string();
  const format::UniqueFd out(mkostemp(temporary.data(), O_CLOEXEC));
  if (!out) return false;
  // No fsync: an entry cut short by a crash fails its trailer or CRC.
  if (!format::write_all(out.get(), bytes.data(), bytes.size()) || !format::write_all(out.get(), &t, sizeof t) ||
      rename(temporary.c_str(), path.c_str()) != 0) {
    unlink(temporary.c_str());
    return false;
  }
  keep_under_bound();
  return true;
}

void InflatedCache::keep_under_bound() const {
  // (modification time, size, path) of every file in the folder, temporary
  // files of other commands included: one removed before its rename only
  // costs that command its entry.
  std::vector<std::tuple<int64_t, uint64_t, std::filesystem::path>> files;
  uint64_t total = 0;
  std::error_code error;
  for (std::filesystem::directory_iterator it(folder_, error), end; !error && it != end; it.increment(error)) {
    struct stat st;
    if (lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    files.emplace_back(mtime_ns(st), static_cast<uint64_t>(st.st_size), it->path());
    total += static_cast<uint64_t>(st.st_size);
  }
  std::ranges::sort(files);
  for (const auto& [mtime, size, path] : files) {
    if (total < bound_) break;
    if (unlink(path.c_str()) == 0) total -= size;
  }
}

}  // namespace memloupe::symbolize
