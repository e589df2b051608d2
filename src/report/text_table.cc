#include "report/text_table.h"

#include <algorithm>
#include <stdexcept>

#include "report/html_json.h"
#include "report/text_format.h"

namespace memloupe::report {

void TextTable::add_column(std::string header, Align align, std::vector<std::string> csv_headers) {
  if (csv_headers.empty()) csv_headers = {header};
  columns_.push_back(Column{std::move(header), std::move(csv_headers), align});
}

void TextTable::add_row(std::vector<Cell> cells, std::vector<std::string> notes) {
  if (cells.size() != columns_.size()) throw std::logic_error("TextTable: row width differs from the columns");
  for (size_t c = 0; c < cells.size(); ++c) {
    if (cells[c].raw.empty()) cells[c].raw = {cells[c].text};
    if (cells[c].raw.size() != columns_[c].csv_headers.size()) {
      throw std::logic_error("TextTable: raw values differ from the CSV columns");
    }
  }
  rows_.push_back(Row{std::move(cells), std::move(notes)});
}

std::string TextTable::render(size_t max_width) const {
  std::vector<size_t> width(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    width[c] = display_width(columns_[c].header);
    for (const Row& r : rows_) width[c] = std::max(width[c], display_width(r.cells[c].text));
  }
  size_t indent = 0;
  for (size_t c = 0; c + 1 < columns_.size(); ++c) indent += width[c] + 2;
  const size_t last_width = max_width == 0 ? std::string::npos : std::max<size_t>(20, max_width - std::min(max_width, indent));
  auto fit = [&](const std::string& s) { return last_width == std::string::npos ? s : truncate_display(s, last_width); };
  if (!columns_.empty()) width.back() = std::min(width.back(), last_width);
  auto line = [&](const std::vector<std::string>& texts) {
    std::string out;
    for (size_t c = 0; c < texts.size(); ++c) {
      const size_t pad = width[c] - display_width(texts[c]);
      const bool last = c + 1 == texts.size();
      if (columns_[c].align == Align::Right) out.append(pad, ' ');
      out += texts[c];
      if (!last) {
        if (columns_[c].align == Align::Left) out.append(pad, ' ');
        out += "  ";
      }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + '\n';
  };
  std::vector<std::string> header, rule;
  for (size_t c = 0; c < columns_.size(); ++c) {
    header.push_back(columns_[c].header);
    std::string dashes;
    for (size_t i = 0; i < width[c]; ++i) dashes += "─";
    rule.push_back(dashes);
  }
  std::string out = line(header) + line(rule);
  for (const Row& r : rows_) {
    std::vector<std::string> texts;
    for (const Cell& cell : r.cells) texts.push_back(cell.text);
    if (!texts.empty()) texts.back() = fit(texts.back());
    out += line(texts);
    for (const std::string& note : r.notes) out += std::string(indent, ' ') + fit(note) + '\n';
  }
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string TextTable::csv() const {
  auto line = [](const auto& fields_of_columns) {
    std::string out;
    bool first = true;
    for (const std::vector<std::string>* fields : fields_of_columns) {
      for (const std::string& f : *fields) {
        out += (first ? "" : ",") + csv_field(f);
        first = false;
      }
    }
    return out + '\n';
  };
  std::vector<const std::vector<std::string>*> header;
  for (const Column& c : columns_) header.push_back(&c.csv_headers);
  std::string out = line(header);
  for (const Row& r : rows_) {
    std::vector<const std::vector<std::string>*> fields;
    for (const Cell& cell : r.cells) fields.push_back(&cell.raw);
    out += line(fields);
  }
  return out;
}

std::string TextTable::json() const {
  JsonWriter json;
  json.begin_array();
  for (const Row& r : rows_) {
    json.begin_object();
    for (size_t c = 0; c < columns_.size(); ++c) {
      for (size_t f = 0; f < columns_[c].csv_headers.size(); ++f) {
        json.key(columns_[c].csv_headers[f]).field(r.cells[c].raw[f]);
      }
    }
    if (!r.notes.empty()) {
      json.key("notes").begin_array();
      for (const std::string& note : r.notes) json.string(note);
      json.end_array();
    }
    json.end_object();
  }
  json.end_array();
  return json.take();
}

}  // namespace memloupe::report
