#include <catch2/catch.hpp>

#include <string>

#include "record/journal_format.hpp"

using namespace perusetrace;

TEST_CASE("journal file names read back as the ranks and threads they were written for") {
  int rank = -2, thread = -2;
  CHECK(journal::parse_name(journal::definitions_name(3), rank, thread));
  CHECK(rank == 3);
  CHECK(thread == -1);
  CHECK(journal::parse_name(journal::records_name(12, 7), rank, thread));
  CHECK(rank == 12);
  CHECK(thread == 7);
  CHECK(journal::parse_name(journal::records_name(0, 1023), rank, thread));
  CHECK(thread == 1023);
  bool buffer = true;
  CHECK(journal::parse_name(journal::records_name(5, 2), rank, thread, buffer));
  CHECK_FALSE(buffer);
  CHECK(journal::parse_name(journal::buffer_name(5, 2), rank, thread, buffer));
  CHECK(buffer);
  CHECK(rank == 5);
  CHECK(thread == 2);
  // The two-argument form names records files only.
  CHECK_FALSE(journal::parse_name(journal::buffer_name(5, 2), rank, thread));
}

TEST_CASE("names the runtime does not write are not journal files") {
  int rank = 0, thread = 0;
  for (const std::string name :
       {"rank-03.defs", "rank-3.defs.bak", "rank-.defs", "rank-3.thread-.records",
        "rank-3.thread-01.records", "rank-3.thread-1.records~", "rank-3", "notes.txt",
        "rank-99999999999999.defs", "rank--1.defs", "RANK-3.defs"}) {
    INFO(name);
    CHECK_FALSE(journal::parse_name(name, rank, thread));
  }
}
