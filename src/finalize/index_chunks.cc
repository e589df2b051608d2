#include "finalize/index_chunks.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "format/wire.h"
#include "reader/chunk_io.h"

namespace memloupe::finalize {

static_assert(kIndexPart <= format::kMaxChunkRaw);

void append_index_chunks(std::vector<uint8_t>& out, std::span<const uint8_t> index, int level) {
  size_t parts = std::max<size_t>(1, (index.size() + kIndexPart - 1) / kIndexPart);
  if (parts == 1) {
    reader::append_chunk_compressed(out, format::ChunkType::AnalysisIndex, index, level);
    return;
  }
  parts += parts % 2;  // an even count keeps both threads busy to the end
  const size_t part_size = (index.size() + parts - 1) / parts;
  std::vector<std::vector<uint8_t>> chunks(parts);
  std::atomic<size_t> next{0};
  std::exception_ptr failures[2];  // each thread's, read after the join
  auto work = [&](size_t worker) {
    try {
      for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < parts;) {
        const size_t at = std::min(index.size(), i * part_size);
        const auto part = index.subspan(at, std::min(part_size, index.size() - at));
        reader::append_chunk_compressed(chunks[i], format::ChunkType::AnalysisIndex, part, level);
      }
    } catch (...) {
      failures[worker] = std::current_exception();
    }
  };
  // Two threads: the machine the suite measures has two cores, and more parts
  // than that queue on the same two anyway.
  std::thread helper(work, 1);
  work(0);
  helper.join();
  for (const std::exception_ptr& f : failures)
    if (f) std::rethrow_exception(f);
  for (const std::vector<uint8_t>& c : chunks) out.insert(out.end(), c.begin(), c.end());
}

}  // namespace memloupe::finalize
