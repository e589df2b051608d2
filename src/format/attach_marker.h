// The marker `memloupe attach` writes where its recording of an already running
// process starts (recorder/attach_entry.cc); `summary` looks for it to say that
// blocks allocated before it are unknown (docs/ATTACH.md). Not a wire format
// change: an ordinary Marker event with this name.
#pragma once

#include <string_view>

namespace memloupe::format {

inline constexpr std::string_view kAttachMarker = "memloupe attach: recording starts";

}  // namespace memloupe::format
