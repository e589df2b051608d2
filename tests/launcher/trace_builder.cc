#include "trace_builder.h"

#include <fstream>

#include "format/snapshot_writer.h"

namespace memloupe::testing {

TraceBuilder::TraceBuilder(format::Mode mode) {
  bytes_.resize(format::kMaxFileHeader);
  const format::HeaderFields header{.mode = mode,
                                    .bytes_per_sample = mode == format::Mode::All ? 0u : 4096u,
                                    .pid = 4242,
                                    .host = "testhost",
                                    .executable = "/usr/bin/testprog",
                                    .argv_nul_separated = std::string_view("testprog\0-x\0", 12)};
  bytes_.resize(format::encode_file_header(header, bytes_));
  chunk_ends_.push_back(bytes_.size());
  encoder_ = std::make_unique<format::Encoder>(sink_, mode);
}

void TraceBuilder::Sink::write_chunk(std::span<const uint8_t> chunk) noexcept {
  b_.bytes_.insert(b_.bytes_.end(), chunk.begin(), chunk.end());
  b_.chunk_ends_.push_back(b_.bytes_.size());
}

void TraceBuilder::module_load(const symbolize::Module& m, uint64_t time_ns) {
  encoder_->module_load({time_ns, m.start, m.end, m.load_bias, m.path, m.build_id});
  ++events_;
}

void TraceBuilder::module_unload(const symbolize::Module& m, uint64_t time_ns) {
  encoder_->module_unload(time_ns, m.start);
  ++events_;
}

format::AllocId TraceBuilder::alloc(const std::vector<uint64_t>& backtrace, uint64_t size, uint64_t time_ns) {
  format::AllocRecord record;
  record.time_ns = time_ns;
  record.size = size;
  record.address = 0x10000 + 64 * events_;
  record.backtrace = backtrace;
  ++events_;
  return encoder_->alloc(record);
}

void TraceBuilder::free(format::AllocId id, uint64_t time_ns) {
  encoder_->free(id, format::ThreadId{0}, time_ns, format::Func::Free);
  ++events_;
}

void TraceBuilder::thread(format::ThreadId thread, uint64_t time_ns, uint32_t os_tid, std::string_view name) {
  encoder_->thread_start(thread, time_ns, os_tid);
  encoder_->thread_name(thread, time_ns, name);
  events_ += 2;
}

void TraceBuilder::snapshot(uint32_t number, bool at_exit, const std::vector<format::AllocId>& blocks,
                            uint64_t time_ns) {
  std::vector<uint8_t> buffer(format::SnapshotWriter::kBufferBytes);
  format::SnapshotWriter w(sink_, buffer.data(), number);
  w.begin({time_ns, at_exit, at_exit ? "exit" : "signal", 1, 0});
  for (format::AllocId id : blocks) w.block(0x10000 + 64 * id.value, 32, id.value);
  w.end(4096, time_ns + 1);
}

void TraceBuilder::end(uint64_t time_ns) {
  encoder_->trace_end(time_ns, format::EndReason::Exit);
  ++events_;
}

void TraceBuilder::flush() { encoder_->flush(); }

void TraceBuilder::write(const std::string& path) const {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes_.data()), static_cast<std::streamsize>(bytes_.size()));
}

}  // namespace memloupe::testing
