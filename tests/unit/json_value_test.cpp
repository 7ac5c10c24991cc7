// The JSON reader `perusetrace diff` reads report files with: values, escapes, and a clear error
// (with its byte offset) for every kind of broken document, never a crash.
#include <catch2/catch.hpp>

#include <string>

#include "tools/diff/json_value.hpp"

using perusetrace::diff::JsonError;
using perusetrace::diff::JsonValue;

TEST_CASE("a report-shaped document reads whole") {
  const JsonValue v = JsonValue::parse(
      R"( {"schema_version":1,"ranks":[{"mpi_ns":12345678901,"functions":[]}],)"
      R"("x":-2.5e3,"ok":true,"no":false,"nothing":null,"s":"a\"b\\c\n\u00e9\ud83d\ude00<"} )");
  REQUIRE(v.is_object());
  CHECK(v["schema_version"].count() == 1);
  CHECK(v["ranks"].items().size() == 1);
  CHECK(v["ranks"].items()[0]["mpi_ns"].count() == 12345678901ull);
  CHECK(v["x"].number() == -2500.0);
  CHECK(v["x"].count() == 0);  // not a count
  CHECK(v["ok"].boolean());
  CHECK_FALSE(v["no"].boolean());
  CHECK(v.has("nothing"));
  CHECK(v["s"].string() == "a\"b\\c\n\xc3\xa9\xf0\x9f\x98\x80<");
}

TEST_CASE("missing members and wrong types read as empty") {
  const JsonValue v = JsonValue::parse(R"({"a":"text","b":[1,2]})");
  CHECK(v["missing"]["deeper"].count() == 0);
  CHECK(v["a"].items().empty());
  CHECK(v["b"].string().empty());
  CHECK(v["b"]["key"].number() == 0);
  CHECK_FALSE(v.has("missing"));
}

TEST_CASE("broken documents are refused with where") {
  const char* broken[] = {
      "",      "{",   "{\"a\":}", "[1,2",       "{\"a\" 1}",          "{\"a\":1,}",
      "[1 2]", "tru", "\"open",   "\"bad\\q\"", "\"\\u12\"",          "1.",
      "1e",    "-",   "{} extra", "\"a\nb\"",   "\"\\ud83d\\u0041\"", "{\"a\":nul}"};
  for (const char* text : broken) {
    INFO(text);
    CHECK_THROWS_AS(JsonValue::parse(text), JsonError);
  }
  try {
    JsonValue::parse("{\"a\": [1, 2,, 3]}");
    FAIL("no error");
  } catch (const JsonError& e) {
    CHECK(std::string(e.what()).find("at byte 12") != std::string::npos);
  }
}

TEST_CASE("nesting is bounded, so a hostile file cannot exhaust the stack") {
  CHECK_THROWS_AS(JsonValue::parse(std::string(100000, '[')), JsonError);
  CHECK_NOTHROW(JsonValue::parse(std::string(50, '[') + std::string(50, ']')));
}
