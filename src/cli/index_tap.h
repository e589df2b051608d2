// The analysis index's tap on the finaliser's read (finalize::FinalizeTap):
// `memloupe run`'s follower and `memloupe symbolize` feed it every event, and
// bench/follow_bench measures the follower's work per event through it.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "analysis/index.h"
#include "finalize/finalize.h"
#include "format/events.h"

namespace memloupe::cli {

// Builds the analysis index on the finaliser's read (the finaliser knows
// nothing of the analysis; this is where the two meet). Its cost is measured
// by bench/suite (symbolize with and without --no-index).
class IndexTap : public finalize::FinalizeTap {
 public:
  explicit IndexTap(analysis::IndexWhen when) : when_(when) {}
  void begin(const format::TraceInfo& info) override { builder_ = std::make_unique<analysis::IndexBuilder>(info, when_); }
  void event(const format::Event& e) override { keyed_event(e, {}); }
  void keyed_event(const format::Event& e, const reader::BacktraceKey& key) override {
    builder_->add(e, key);
    if (const auto* end = std::get_if<format::TraceEnd>(&e)) end_reason_ = end->reason;
    counted();
  }
  void alloc_event(const format::Event&, const format::Alloc& a, const reader::BacktraceKey& key) override {
    builder_->add(a, key);
    counted();
  }
  void free_event(const format::Event&, const format::Free& f) override {
    builder_->add(f);
    counted();
  }
  void rest_at_once() override { builder_->rest_at_once(); }
  void events_over() override {
    stage_.store(Stage::Aggregate, std::memory_order_relaxed);
    builder_->events_over();
  }
  bool live_blocks(const LiveBlockFn& fn) const override { return builder_ && builder_->for_each_live(fn); }
  std::optional<std::vector<uint8_t>> index(std::span<const uint8_t> trace) override {
    stage_.store(Stage::Writing, std::memory_order_relaxed);
    return builder_->finish(trace);
  }

  // The reason of the last TraceEnd among the events (nothing: none).
  const std::optional<format::EndReason>& end_reason() const { return end_reason_; }

  // For the progress line (another thread): how far.
  std::string status() const {
    switch (stage_.load(std::memory_order_relaxed)) {
      case Stage::Reading:
        return fmt::format("reading the events and symbolising, {} events",
                           events_.load(std::memory_order_relaxed));
      case Stage::Aggregate: return "building the analysis index";
      case Stage::Writing: return "writing the analysis index";
    }
    return {};
  }

 private:
  // Only this thread writes the count: a plain store, not a locked add per event.
  void counted() { events_.store(events_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

  enum class Stage : uint8_t { Reading, Aggregate, Writing };
  analysis::IndexWhen when_;
  std::unique_ptr<analysis::IndexBuilder> builder_;
  std::atomic<uint64_t> events_{0};
  std::atomic<Stage> stage_{Stage::Reading};
  std::optional<format::EndReason> end_reason_;
};

}  // namespace memloupe::cli
