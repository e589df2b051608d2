// `memloupe retention --json` (docs/RETENTION.md lists the fields), and the
// JSON pieces the HTML report's retention data shares with it.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "report/html_json.h"
#include "report/text_retention.h"

namespace memloupe::report {

// {"snapshots": [...], "damage": "..."}.
std::string retention_json(std::span<const SnapshotReport> reports, const RetentionOptions& options,
                           const std::string& damage);

// "NAME_bytes": …, "NAME_blocks": … in the object being written.
void amount_json(JsonWriter& json, std::string_view name, const retention::Amount& amount);

}  // namespace memloupe::report
