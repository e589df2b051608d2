// Where elfutils looks for a module's separate debug file, asked before its
// search is run: with no debuginfod server configured, memloupe runs that
// search only when a file it would open is there (elf_file.cc's find_debuginfo).
//
// Why: elfutils 0.188's dwfl_standard_find_debuginfo, when its local search
// finds nothing for a module with a build-id, asks debuginfod, and so
// dlopens libdebuginfod.so.1 and the ~25 libraries it needs (libcurl, gnutls,
// krb5, ldap, ...: 3-4 ms of every `memloupe run`) even with DEBUGINFOD_URLS
// unset, when the client answers ENOSYS without reading its cache (later
// elfutils test the variable first). Asking first rather than searching
// ourselves: the search, its checks of the file found (build-id, CRC) and what
// it leaves in the module stay elfutils' own.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace memloupe::symbolize {

// elfutils' default place of separate debug files (its default
// debuginfo_path ":.debug:/usr/lib/debug" looks up build-ids there only).
inline constexpr const char* kSystemDebugRoot = "/usr/lib/debug";

// `root`/.build-id/xx/yyyy.debug: where a separate debug file is found by build-id.
std::string debug_file_path(const std::string& root, std::span<const uint8_t> build_id);

// Whether a debuginfod server is configured: DEBUGINFOD_URLS set and not
// empty (libdebuginfod's own test; without one it asks nothing, its cache neither).
bool debuginfod_configured();

// Whether a file is there that elfutils' local search for `file`'s own
// separate debug file (the default debuginfo path) would open:
// - by build-id, /usr/lib/debug/.build-id/xx/yyyy.debug;
// - by name (`debuglink`, the file's .gnu_debuglink, else the file's name +
//   ".debug", then also the file's name outside its own directory): in the
//   file's directory, its .debug/, and /usr/lib/debug/ followed by each tail
//   of the file's absolute directory, down to /usr/lib/debug itself;
// for `file` as named and as its symlinks resolve. The file itself met by
// another name does not count (elfutils skips it). No means that search
// finds nothing; yes that it may (it still checks the build-id or CRC), and
// a path that cannot be looked at counts as yes.
bool local_debug_file_may_exist(const std::string& file, std::span<const uint8_t> build_id, const char* debuglink);

}  // namespace memloupe::symbolize
