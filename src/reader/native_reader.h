// The reader of memloupe's own format (docs/FORMAT.md).
#pragma once

#include <memory>

#include "format/expected.h"
#include "reader/bytes.h"
#include "reader/reader.h"

namespace memloupe::reader {

// Expects `bytes` to start with the memloupe magic.
Expected<std::unique_ptr<Reader>> open_native(std::unique_ptr<Bytes> bytes);

}  // namespace memloupe::reader
