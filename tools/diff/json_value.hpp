// A JSON document read whole into a tree, for `perusetrace diff` reading report JSON files. The
// reports are small (kilobytes to a few megabytes): a plain recursive reader is enough.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace perusetrace::diff {

// What is wrong with a document, with the byte offset where it was found.
class JsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class JsonValue {
 public:
  enum class Type { Null, Bool, Number, String, Array, Object };

  Type type() const { return type_; }
  bool is_object() const { return type_ == Type::Object; }
  bool is_array() const { return type_ == Type::Array; }
  bool is_number() const { return type_ == Type::Number; }
  bool is_string() const { return type_ == Type::String; }

  // Lenient accessors: a value of another type, or a missing member, reads as null, 0, "",
  // false or empty, so that one check at the top of a document is enough.
  double number() const { return type_ == Type::Number ? number_ : 0.0; }
  std::uint64_t count() const;  // a non-negative integer; anything else is 0
  bool boolean() const { return type_ == Type::Bool && boolean_; }
  const std::string& string() const;
  const std::vector<JsonValue>& items() const;
  const JsonValue& operator[](const std::string& key) const;
  bool has(const std::string& key) const;

  static JsonValue parse(const std::string& text);  // throws JsonError

 private:
  friend class JsonParser;
  Type type_ = Type::Null;
  bool boolean_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> items_;
  std::map<std::string, JsonValue> members_;
};

}  // namespace perusetrace::diff
