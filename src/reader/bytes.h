// The bytes of a trace file: mapped read-only from disk, or owned in memory.
// Readers hold one of these and index into it; nothing copies the whole file.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "format/expected.h"

namespace memloupe::reader {

class Bytes {
 public:
  virtual ~Bytes() = default;
  virtual std::span<const uint8_t> data() const = 0;
  const std::string& name() const { return name_; }

  // Maps `path` read-only (an empty file is fine); a FIFO, pipe or character
  // device is read to its end instead, once per process (bytes.cc). Errors
  // name the path and errno.
  static Expected<std::unique_ptr<Bytes>> map_file(const std::string& path);
  static std::unique_ptr<Bytes> from_vector(std::vector<uint8_t> bytes, std::string name);

 protected:
  explicit Bytes(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

}  // namespace memloupe::reader
