// gzip compression (pprof files are conventionally gzipped; `go tool pprof`
// reads either).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "format/expected.h"

namespace memloupe::report {

Expected<std::vector<uint8_t>> gzip_compress(std::span<const uint8_t> input);

}  // namespace memloupe::report
