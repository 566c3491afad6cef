// A small well-formedness check for the XML the profiler writes (SVG): balanced and properly
// nested tags, quoted attributes, no stray '<' or '&'. Enough to catch a broken writer without
// an XML library.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace tilert::profile::testing {

inline bool xml_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
}

// An entity reference at `text[i]` ('&'): "&amp;", "&lt;", "&#38;"...; its length, or 0.
inline size_t xml_entity_length(std::string_view text, size_t i) {
  size_t end = text.find(';', i);
  if (end == std::string_view::npos || end - i < 2 || end - i > 8) return 0;
  for (size_t k = i + 1; k < end; ++k)
    if (!std::isalnum(static_cast<unsigned char>(text[k])) && text[k] != '#') return 0;
  return end - i + 1;
}

// Empty when `xml` is well-formed, else what is wrong and where.
inline std::string xml_problem(std::string_view xml) {
  std::vector<std::string> open;
  size_t i = 0, elements = 0;
  auto at = [&](size_t pos) { return " at offset " + std::to_string(pos); };
  while (i < xml.size()) {
    char c = xml[i];
    if (c == '&') {
      size_t n = xml_entity_length(xml, i);
      if (n == 0) return "bare '&'" + at(i);
      i += n;
      continue;
    }
    if (c == '>') return "stray '>'" + at(i);
    if (c != '<') {
      ++i;
      continue;
    }
    if (xml.substr(i, 5) == "<?xml") {
      size_t end = xml.find("?>", i);
      if (end == std::string_view::npos || i != 0) return "bad XML declaration" + at(i);
      i = end + 2;
      continue;
    }
    if (xml.substr(i, 4) == "<!--") {
      size_t end = xml.find("-->", i);
      if (end == std::string_view::npos) return "unterminated comment" + at(i);
      i = end + 3;
      continue;
    }
    bool closing = i + 1 < xml.size() && xml[i + 1] == '/';
    size_t p = i + (closing ? 2 : 1);
    size_t name_start = p;
    while (p < xml.size() && xml_name_char(xml[p])) ++p;
    if (p == name_start) return "tag without a name" + at(i);
    std::string name(xml.substr(name_start, p - name_start));
    bool self_closing = false;
    // Attributes: NAME="VALUE" separated by spaces.
    while (true) {
      while (p < xml.size() && std::isspace(static_cast<unsigned char>(xml[p]))) ++p;
      if (p >= xml.size()) return "unterminated tag <" + name + at(i);
      if (xml[p] == '>') break;
      if (!closing && xml.substr(p, 2) == "/>") {
        self_closing = true;
        ++p;
        break;
      }
      if (closing) return "attributes in the end tag </" + name + at(i);
      size_t attr = p;
      while (p < xml.size() && xml_name_char(xml[p])) ++p;
      if (p == attr || p + 1 >= xml.size() || xml[p] != '=' || (xml[p + 1] != '"' && xml[p + 1] != '\''))
        return "malformed attribute in <" + name + at(attr);
      char quote = xml[p + 1];
      size_t value_end = xml.find(quote, p + 2);
      if (value_end == std::string_view::npos) return "unterminated attribute value" + at(attr);
      std::string_view value = xml.substr(p + 2, value_end - p - 2);
      if (value.find('<') != std::string_view::npos) return "'<' in an attribute value" + at(attr);
      p = value_end + 1;
    }
    i = p + 1;
    if (closing) {
      if (open.empty() || open.back() != name) return "</" + name + "> does not close the open element" + at(i);
      open.pop_back();
      continue;
    }
    if (open.empty() && elements > 0) return "a second root element <" + name + ">" + at(i);
    ++elements;
    if (!self_closing) open.push_back(name);
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (elements == 0) return "no element";
  return {};
}

}  // namespace tilert::profile::testing
