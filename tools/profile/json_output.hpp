// The profile as one JSON object (docs/profile-schema.md); the HTML view embeds the same tree.
#pragma once

#include <string>

#include "tools/profile/profile_data.hpp"

namespace perusetrace::profile {

std::string to_json(const Profile& p);

// A JSON string; '<' is escaped too, so that the text can sit inside an HTML <script>.
std::string json_string(const std::string& s);
// {"not_in_mpi":12,"stall/message":3}: the categories with samples, in samples.
std::string json_counts(const Counts& c);

}  // namespace perusetrace::profile
