// The Paraver converter's translation cut into shares, as `prv --np N` runs it but in one
// process and without MPI: each share of the archive's ranks read by a reader of its own, the
// halves of the sends that leave it handed to the share of their receiver (before or after
// that share has read its receives), which pairs them
// (reader/message_matcher.hpp's share and pair_remote, through reader/message_halves.hpp's
// bytes). On the small real archives of tests/data the shares together write exactly the
// records, communication records included, of the translation of the whole archive.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "reader/location_share.hpp"
#include "reader/message_halves.hpp"
#include "tools/prv/paraver_objects.hpp"
#include "tools/prv/prv_writer.hpp"
#include "tools/prv/translator.hpp"

namespace {

using namespace perusetrace;

struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/prv-shares-test-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

struct Result {
  std::vector<std::string> records;  // sorted
  std::uint64_t matched = 0, unmatched = 0;
};

// The archive translated in `parts` shares (1: whole, without share()).
Result translate(const std::string& archive, unsigned parts, const std::string& dir) {
  archive::ArchiveReader first(archive);
  const archive::Definitions& defs = first.definitions();
  const prv::Layout layout = prv::make_layout(defs);
  std::vector<unsigned> owner(defs.ranks.size(), 0);
  for (unsigned p = 0; p < parts; ++p)
    for (const std::uint32_t r : archive::ranks_of_share(defs, p, parts)) owner[r] = p;

  std::vector<std::unique_ptr<archive::ArchiveReader>> readers;
  std::vector<std::unique_ptr<prv::PrvWriter>> writers;
  std::vector<std::unique_ptr<prv::Translator>> translators;
  for (unsigned p = 0; p < parts; ++p) {
    readers.push_back(std::make_unique<archive::ArchiveReader>(archive));
    writers.push_back(
        std::make_unique<prv::PrvWriter>(dir + "/part" + std::to_string(p), 64u << 10));
    translators.push_back(
        std::make_unique<prv::Translator>(readers[p]->definitions(), *writers[p], layout.objects));
  }
  // The shares one after the other, each one's halves handed over as bytes at once: a share
  // read before gets them after its receives, one read later before them.
  for (unsigned p = 0; p < parts; ++p) {
    const std::vector<std::uint32_t> share = archive::location_share(defs, p, parts);
    if (parts > 1) {
      translators[p]->share(share);
      readers[p]->set_locations(share);
    }
    if (!share.empty())
      readers[p]->read_events(*translators[p], [](std::uint64_t, std::uint64_t) {});
    translators[p]->finish(defs.trace_length);
    std::vector<std::vector<archive::SendHalf>> to(parts);
    for (const archive::SendHalf& h : translators[p]->messages().take_remote_sends())
      to[owner.at(h.key.to)].push_back(h);
    for (unsigned q = 0; q < parts; ++q) {
      std::vector<archive::SendHalf> halves;
      archive::decode_halves(archive::encode_halves(to[q]), halves);
      translators[q]->messages().pair_remote(halves);
    }
  }
  Result out;
  for (unsigned p = 0; p < parts; ++p) {
    translators[p]->messages().finish_remote();
    writers[p]->finish([](std::uint64_t) { return std::string(); }, nullptr);
    for (std::string& line : lines_of(dir + "/part" + std::to_string(p)))
      out.records.push_back(std::move(line));
    const archive::MessageMatcher& m = translators[p]->messages();
    out.matched += m.matched();
    out.unmatched += m.unmatched_sends() + m.unmatched_recvs();
  }
  std::sort(out.records.begin(), out.records.end());
  return out;
}

}  // namespace

TEST_CASE("shares of an archive translate to the records of the whole") {
  const std::string data = PERUSETRACE_TEST_DATA;
  for (const char* name :
       {"wait_states/chain", "wait_states/wrong-order", "wait_states/late-receiver-isend",
        "known_counts", "datatypes", "late_sender", "polls"}) {
    INFO(name);
    TempDir whole_dir;
    const Result whole = translate(data + "/" + name, 1, whole_dir.path);
    REQUIRE(whole.matched > 0);
    for (unsigned parts = 2; parts <= 5; ++parts) {
      INFO(parts << " shares");
      TempDir dir;
      const Result cut = translate(data + "/" + name, parts, dir.path);
      CHECK(cut.matched == whole.matched);
      CHECK(cut.unmatched == whole.unmatched);
      CHECK(cut.records == whole.records);
    }
  }
}
