// The analysis index's chunks (docs/FORMAT.md §10): the run of type-5 chunks
// that ends a finalised file, their payloads concatenated in order. A large
// index (cc1plus: 10.9 MB raw for 67 k stacks) is split into an even number
// of equal parts of at most kIndexPart bytes, compressed two at a time, since its compression is the last
// thing done after the program's exit and waits for everything before it (the
// fingerprint covers the chunks before). How it is split depends only on its
// size, never on the machine's CPUs, so the file's bytes are reproducible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace memloupe::finalize {

// 4 MiB: an index up to it is one chunk (all of the suite's traces but
// cc1plus's); zstd's ratio on a part of 4 MiB is within ~1% of the whole's.
inline constexpr size_t kIndexPart = size_t{4} << 20;

// Appends `index` to `out` as one chunk (empty if it is) when it holds at most
// kIndexPart bytes, else as an even number of chunks of equal size (the last
// shorter) of at most kIndexPart bytes; zstd-compressed at `level`.
void append_index_chunks(std::vector<uint8_t>& out, std::span<const uint8_t> index, int level);

}  // namespace memloupe::finalize
