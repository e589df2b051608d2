#include "report/export_gzip.h"

#include <zlib.h>

#include <string>

namespace memloupe::report {

namespace {

// Owns a deflate stream: deflateEnd runs on every path out.
class Deflater {
 public:
  Deflater() {
    // windowBits 15 + 16 asks zlib for a gzip header and trailer instead of zlib's own.
    ok_ = deflateInit2(&z_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~Deflater() {
    if (ok_) deflateEnd(&z_);
  }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;

  bool ok() const { return ok_; }
  z_stream& stream() { return z_; }

 private:
  z_stream z_{};
  bool ok_ = false;
};

}  // namespace

Expected<std::vector<uint8_t>> gzip_compress(std::span<const uint8_t> input) {
  Deflater deflater;
  if (!deflater.ok()) return Error{"zlib: deflateInit2 failed"};
  z_stream& z = deflater.stream();
  std::vector<uint8_t> out(deflateBound(&z, input.size()) + 32);
  z.next_in = const_cast<Bytef*>(input.data());  // zlib's API is not const-correct
  z.avail_in = static_cast<uInt>(input.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  if (input.size() != z.avail_in) return Error{"zlib: input larger than 4 GiB"};
  int rc = deflate(&z, Z_FINISH);
  if (rc != Z_STREAM_END) return Error{"zlib: deflate failed (" + std::to_string(rc) + ")"};
  out.resize(z.total_out);
  return out;
}

}  // namespace memloupe::report
