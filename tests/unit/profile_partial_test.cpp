// The profile's partial counts (tools/profile/aggregation.hpp), which the ranks of a parallel
// profile send each other: the halves of the samples, each counted apart and added, make the
// profile of all of them; bytes of another archive or cut short are refused.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "tools/profile/aggregation.hpp"

using namespace perusetrace;

namespace {

// Two ranks of one thread each; main -> MPI_Recv as calling contexts 0 -> 1.
archive::Definitions definitions() {
  archive::Definitions defs;
  defs.sampling_period_ns = 1'000'000;
  defs.ranks = {archive::RankDef{"rank 0", 0, 1}, archive::RankDef{"rank 1", 0, 1}};
  archive::LocationDef l0, l1;
  l1.rank = 1;
  l1.id = 1;
  defs.locations = {l0, l1};
  archive::RegionDef main_fn, recv;
  main_fn.name = "main";
  recv.name = "MPI_Recv";
  recv.kind = archive::RegionKind::MpiFunction;
  defs.regions = {main_fn, recv};
  defs.contexts = {archive::ContextDef{0, archive::kNoContext, "", 0},
                   archive::ContextDef{1, 0, "app.c", 7}};
  return defs;
}

// Sample i of 40: rank i % 2, in main or stalled in MPI_Recv.
void add_samples(profile::Aggregation& a, int from, int to) {
  for (int i = from; i < to; ++i) {
    archive::Sample s;
    s.context = i % 3 == 0 ? 1 : 0;
    s.state = i % 3 == 0 ? 2 : 0;
    s.activity = i % 3 == 0 ? 1 : 0;
    s.weight = 1 + i % 2;
    a.sample(static_cast<std::uint32_t>(i % 2), static_cast<std::uint64_t>(i), s);
  }
}

std::string summary(const profile::Profile& p) {
  std::string out = std::to_string(p.samples);
  for (const profile::RankStat& r : p.ranks)
    out += " " + std::to_string(r.threads) + ":" + std::to_string(r.counts.total()) + "/" +
           std::to_string(r.counts.stall());
  for (const profile::Node& n : p.nodes)
    out += " " + n.name + "=" + std::to_string(n.total.total());
  return out;
}

}  // namespace

TEST_CASE("halves counted apart and added make the whole profile") {
  const archive::Definitions defs = definitions();
  profile::Aggregation whole(defs), first(defs), second(defs), sum(defs);
  add_samples(whole, 0, 40);
  add_samples(first, 0, 17);
  add_samples(second, 17, 40);
  sum.add_partial(second.partial());
  sum.add_partial(first.partial());
  CHECK(sum.samples() == whole.samples());
  CHECK(sum.partial() == whole.partial());
  CHECK(summary(sum.finish()) == summary(whole.finish()));
  CHECK(whole.samples() == 60);  // weights 1 and 2, twenty each
}

TEST_CASE("partial counts of another archive or cut short are refused") {
  const archive::Definitions defs = definitions();
  profile::Aggregation a(defs);
  add_samples(a, 0, 10);
  const std::string bytes = a.partial();
  archive::Definitions fewer = defs;
  fewer.contexts.pop_back();  // context 1 is not in this archive
  profile::Aggregation other(fewer);
  CHECK_THROWS_AS(other.add_partial(bytes), std::runtime_error);
  profile::Aggregation b(defs);
  CHECK_THROWS_AS(b.add_partial(bytes.substr(0, bytes.size() - 8)), std::runtime_error);
  CHECK_THROWS_AS(b.add_partial(bytes + "x"), std::runtime_error);
  CHECK_THROWS_AS(b.add_partial(""), std::runtime_error);
}
