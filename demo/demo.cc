// memloupe_demo: a small program with memory behaviour worth looking at.
//
// It builds an in-memory word index over generated text and runs queries on
// it, so a profile shows a few distinct allocation sites with their own call
// chains (see docs/RUNNING.md for the walkthrough):
//   - the index itself: long-lived postings vectors and keys   (the peak)
//   - tokenising: a std::string per word, freed at once       (temporaries)
//   - query evaluation: vectors built and dropped per query    (temporaries)
//   - a query log whose entries are never freed               (a leak)
//   - a worker thread building vocabulary snapshots            (a thread)
// Deterministic: the text and the queries come from a fixed seed.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace demo {

// A small deterministic generator (xorshift), so every run is the same.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint32_t below(uint32_t n) {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return static_cast<uint32_t>(state_ % n);
  }

 private:
  uint64_t state_;
};

// Text with a Zipf-like word distribution: a few very common words, a long tail.
std::string generate_text(Random& rng, size_t words) {
  static constexpr const char* kSyllables[] = {"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi",
                                               "zo", "be", "da", "fu", "gi", "ho", "ja", "pe"};
  std::string text;
  for (size_t i = 0; i < words; ++i) {
    const uint32_t rank = rng.below(rng.below(4000) + 1);  // skewed towards small ranks
    uint32_t r = rank;
    do {
      text += kSyllables[r % 16];
      r /= 16;
    } while (r != 0);
    text += (i % 17 == 16) ? '\n' : ' ';
  }
  return text;
}

// Splits text into words: one std::string per word, all temporary.
std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> words;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ' ' || text[i] == '\n') {
      if (i > start) words.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return words;
}

class WordIndex {
 public:
  // Indexes one document: every word's postings get the document's id.
  void add_document(uint32_t doc, std::string_view text) {
    for (const std::string& word : tokenize(text)) {
      std::vector<uint32_t>& postings = postings_[word];
      if (postings.empty() || postings.back() != doc) postings.push_back(doc);
    }
  }

  // Documents containing every word of the query.
  std::vector<uint32_t> query(std::string_view q) const {
    std::vector<uint32_t> result;
    bool first = true;
    for (const std::string& word : tokenize(q)) {
      auto it = postings_.find(word);
      if (it == postings_.end()) return {};
      if (first) {
        result = it->second;
        first = false;
        continue;
      }
      std::vector<uint32_t> both;
      std::set_intersection(result.begin(), result.end(), it->second.begin(), it->second.end(),
                            std::back_inserter(both));
      result.swap(both);
    }
    return result;
  }

  // A sorted copy of the vocabulary (what an autocompleter would build).
  std::vector<std::string> vocabulary() const {
    std::vector<std::string> words;
    words.reserve(postings_.size());
    for (const auto& [word, postings] : postings_) words.push_back(word);
    std::sort(words.begin(), words.end());
    return words;
  }

  size_t words() const { return postings_.size(); }

 private:
  std::unordered_map<std::string, std::vector<uint32_t>> postings_;
};

// Every query is logged; the log entries are never freed (the demo's leak).
struct LogEntry {
  char query[120];
  uint32_t hits;
};
std::vector<LogEntry*> g_query_log;

void log_query(std::string_view q, size_t hits) {
  auto* entry = new LogEntry{};
  std::memcpy(entry->query, q.data(), std::min(q.size(), sizeof entry->query - 1));
  entry->hits = static_cast<uint32_t>(hits);
  g_query_log.push_back(entry);
}

// A worker that rebuilds vocabulary snapshots while the queries run.
size_t snapshot_worker(const WordIndex& index, int rounds) {
  size_t longest = 0;
  for (int i = 0; i < rounds; ++i) {
    const std::vector<std::string> vocabulary = index.vocabulary();
    longest = std::max(longest, vocabulary.empty() ? 0 : vocabulary.back().size());
  }
  return longest;
}

}  // namespace demo

int main() {
  demo::Random rng(20240601);
  demo::WordIndex index;
  constexpr uint32_t kDocuments = 400;
  for (uint32_t doc = 0; doc < kDocuments; ++doc) {
    index.add_document(doc, demo::generate_text(rng, 1500));
  }

  size_t longest = 0;
  std::thread worker([&] { longest = demo::snapshot_worker(index, 20); });

  size_t total_hits = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string q = demo::generate_text(rng, 1 + rng.below(3));
    const std::vector<uint32_t> hits = index.query(q);
    total_hits += hits.size();
    if (i % 4 == 0) demo::log_query(q, hits.size());
  }
  worker.join();

  std::printf("indexed %u documents, %zu distinct words\n", kDocuments, index.words());
  std::printf("20000 queries, %zu hits, %zu logged; longest word %zu letters\n", total_hits,
              demo::g_query_log.size(), longest);
  return 0;
}
