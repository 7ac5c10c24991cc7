#include "tools/diff/json_value.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstdlib>

namespace perusetrace::diff {

namespace {
const JsonValue kNull;
const std::string kEmpty;
const std::vector<JsonValue> kNoItems;
constexpr int kMaxDepth = 200;  // deeper is no report; a bound keeps the recursion safe
}  // namespace

std::uint64_t JsonValue::count() const {
  if (type_ != Type::Number || !(number_ >= 0) || number_ >= 1.8e19) return 0;
  return static_cast<std::uint64_t>(std::llround(number_));
}

const std::string& JsonValue::string() const {
  return type_ == Type::String ? string_ : kEmpty;
}

const std::vector<JsonValue>& JsonValue::items() const {
  return type_ == Type::Array ? items_ : kNoItems;
}

const JsonValue& JsonValue::operator[](const std::string& key) const {
  if (type_ != Type::Object) return kNull;
  auto it = members_.find(key);
  return it == members_.end() ? kNull : it->second;
}

bool JsonValue::has(const std::string& key) const {
  return type_ == Type::Object && members_.count(key) > 0;
}

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : s_(text) {}

  JsonValue document() {
    JsonValue v = value(0);
    space();
    if (at_ != s_.size()) fail("text after the end of the document");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw JsonError(fmt::format("{} at byte {}", what, at_));
  }
  void space() {
    while (at_ < s_.size() &&
           (s_[at_] == ' ' || s_[at_] == '\n' || s_[at_] == '\t' || s_[at_] == '\r'))
      ++at_;
  }
  bool take(char c) {
    space();
    if (at_ < s_.size() && s_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(fmt::format("'{}' expected", c));
  }
  void word(const char* w) {
    for (const char* p = w; *p != '\0'; ++p, ++at_)
      if (at_ >= s_.size() || s_[at_] != *p) fail("a value expected");
  }

  JsonValue value(int depth) {
    if (depth > kMaxDepth) fail("nesting too deep");
    space();
    if (at_ >= s_.size()) fail("the document ends where a value was expected");
    JsonValue v;
    const char c = s_[at_];
    if (c == '{') {
      ++at_;
      v.type_ = JsonValue::Type::Object;
      if (take('}')) return v;
      do {
        space();
        if (at_ >= s_.size() || s_[at_] != '"') fail("a member name expected");
        std::string key = string();
        expect(':');
        v.members_[key] = value(depth + 1);
      } while (take(','));
      expect('}');
    } else if (c == '[') {
      ++at_;
      v.type_ = JsonValue::Type::Array;
      if (take(']')) return v;
      do v.items_.push_back(value(depth + 1));
      while (take(','));
      expect(']');
    } else if (c == '"') {
      v.type_ = JsonValue::Type::String;
      v.string_ = string();
    } else if (c == 't' || c == 'f') {
      v.type_ = JsonValue::Type::Bool;
      v.boolean_ = c == 't';
      word(c == 't' ? "true" : "false");
    } else if (c == 'n') {
      word("null");
    } else {
      v.type_ = JsonValue::Type::Number;
      v.number_ = number();
    }
    return v;
  }

  double number() {
    const std::size_t start = at_;
    if (at_ < s_.size() && s_[at_] == '-') ++at_;
    auto digits = [&] {
      const std::size_t from = at_;
      while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
      return at_ > from;
    };
    if (!digits()) fail("a value expected");
    if (at_ < s_.size() && s_[at_] == '.') {
      ++at_;
      if (!digits()) fail("digits expected after '.'");
    }
    if (at_ < s_.size() && (s_[at_] == 'e' || s_[at_] == 'E')) {
      ++at_;
      if (at_ < s_.size() && (s_[at_] == '+' || s_[at_] == '-')) ++at_;
      if (!digits()) fail("digits expected in the exponent");
    }
    return std::strtod(s_.substr(start, at_ - start).c_str(), nullptr);
  }

  unsigned hex4() {
    if (at_ + 4 > s_.size()) fail("a \\u escape cut short");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[at_++];
      v <<= 4;
      if (h >= '0' && h <= '9')
        v |= static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f')
        v |= static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        v |= static_cast<unsigned>(h - 'A' + 10);
      else
        fail("a bad \\u escape");
    }
    return v;
  }

  void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    ++at_;  // the opening quote
    std::string out;
    while (true) {
      if (at_ >= s_.size()) fail("a string without its closing quote");
      const char c = s_[at_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("a control character inside a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= s_.size()) fail("a string without its closing quote");
      const char e = s_[at_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && at_ + 6 <= s_.size() && s_[at_] == '\\' &&
              s_[at_ + 1] == 'u') {
            at_ += 2;
            const unsigned low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("a bad \\u surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default:
          fail("a bad escape in a string");
      }
    }
  }

  const std::string& s_;
  std::size_t at_ = 0;
};

JsonValue JsonValue::parse(const std::string& text) {
  return JsonParser(text).document();
}

}  // namespace perusetrace::diff
