// An aligned text table for the terminal, and the same rows as CSV.
//
// Each cell has the text people read and, optionally, the raw values CSV gets
// (bytes as a number rather than "1.2 MiB"; an estimate as value, low, high:
// one text column may be several CSV columns). A row may carry extra lines
// printed under it, indented to the last column (backtraces under a site).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace memloupe::report {

struct Cell {
  std::string text;
  std::vector<std::string> raw;  // for CSV, one per CSV column; empty = {text}
};

class TextTable {
 public:
  enum class Align { Left, Right };

  // `csv_headers` empty = {header}; otherwise every row's cell has as many raw values.
  void add_column(std::string header, Align align, std::vector<std::string> csv_headers = {});
  // Cells must match the columns in number.
  void add_row(std::vector<Cell> cells, std::vector<std::string> notes = {});
  size_t rows() const { return rows_.size(); }

  // Columns separated by two spaces; the header underlined; the last column is
  // not padded. Notes go under their row, starting at the last column. With
  // `max_width`, the last column and the notes are cut (with "…") to fit it,
  // keeping at least 20 columns for them.
  std::string render(size_t max_width = 0) const;
  // RFC 4180: a header line, then one line per row (notes are not included).
  std::string csv() const;
  // The CSV's rows as a JSON array of objects keyed by the CSV headers; numbers
  // as numbers, empty fields as null; a row's notes (a site's callers) as "notes".
  std::string json() const;

 private:
  struct Column {
    std::string header;
    std::vector<std::string> csv_headers;
    Align align;
  };
  struct Row {
    std::vector<Cell> cells;
    std::vector<std::string> notes;
  };
  std::vector<Column> columns_;
  std::vector<Row> rows_;
};

std::string csv_field(const std::string& s);

}  // namespace memloupe::report
