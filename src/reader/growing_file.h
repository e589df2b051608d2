// A trace file that is still being written (the recorder appends whole chunks
// to it), as Bytes a Reader can follow: data() holds the complete chunks
// written so far and stays at the same address as it grows, so what a reader
// holds into it stays valid. grow() takes in what was appended; once the
// writer is done, whole() exposes the file to its last byte, so a reader
// resumed then (Reader::resume) ends as a reader of the finished file does,
// at a cut-short last chunk too.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "format/expected.h"
#include "reader/bytes.h"

namespace memloupe::reader {

class GrowingFile final : public Bytes {
 public:
  // Fails when the file cannot be opened (it may not exist yet) or the address
  // range cannot be reserved.
  static Expected<std::unique_ptr<GrowingFile>> open(const std::string& path);
  ~GrowingFile() override;
  GrowingFile(const GrowingFile&) = delete;
  GrowingFile& operator=(const GrowingFile&) = delete;

  std::span<const uint8_t> data() const override { return {base_, exposed_}; }
  // Reads what was appended and exposes the complete chunks. Returns whether
  // data() grew; an error when the file outgrew the reserved range, shrank, or
  // cannot be read (a follower then gives up and reads the finished file).
  Expected<bool> grow();
  // The writer is done: reads and exposes the whole file.
  std::optional<Error> whole();
  // Starts writing to the disk what data() holds and was not started before,
  // without waiting: the finalise's fsync after the program's exit then
  // waits for the last chunks only, not for the whole trace the writer left
  // in the page cache. Best effort: nothing is reported.
  void start_writeback();
  // Where the writeback started so far ends: a whole page, within data().
  uint64_t written_back() const { return written_back_; }

 private:
  GrowingFile(std::string path, int fd, uint8_t* base);
  std::optional<Error> read_to(uint64_t size);  // reads the file up to `size` into base_

  int fd_;
  uint8_t* base_;           // the reserved range; its first held_ bytes hold the file's
  uint64_t held_ = 0;       // bytes of the file read into base_
  uint64_t committed_ = 0;  // bytes of the range made readable and writable (whole pages)
  uint64_t exposed_ = 0;    // at a chunk boundary until whole()
  uint64_t size_ = 0;       // of the file when last looked at
  uint64_t written_back_ = 0;  // start_writeback() started the bytes before this
};

}  // namespace memloupe::reader
