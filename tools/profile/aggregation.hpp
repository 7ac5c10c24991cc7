// The profile's aggregation: counts the archive's samples per rank and calling context while
// the reader streams them, then folds the counts into the tree, functions, sites and ranks of a
// Profile.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "reader/archive_reader.hpp"
#include "tools/profile/profile_data.hpp"

namespace perusetrace::profile {

class Aggregation : public archive::EventSink {
 public:
  explicit Aggregation(const archive::Definitions& defs) : defs_(defs) {}

  void sample(std::uint32_t loc, std::uint64_t t, const archive::Sample& s) override;

  std::uint64_t samples() const { return samples_; }
  // The counts so far as bytes, for another process of a parallel profile to add to its own
  // (add_partial): the same profile whichever process read which locations.
  std::string partial() const;
  // Throws std::runtime_error for bytes partial() did not write for this archive.
  void add_partial(const std::string& bytes);
  // After the last event: the profile (archive, creator and settings are the caller's to fill).
  Profile finish() const;

 private:
  const archive::Definitions& defs_;
  // Samples by (world rank << 32 | context): a run has few distinct stacks per rank, so this
  // stays small however long it ran.
  std::unordered_map<std::uint64_t, Counts> counts_;
  std::vector<std::uint64_t> location_samples_;
  std::uint64_t samples_ = 0;
};

}  // namespace perusetrace::profile
