// One thread's reading of the events of some of an archive's locations: an OTF2 reader of its
// own, whose global event reader hands the events over in OTF2's order, turned into records
// (event_batch.hpp) as the archive has them: OTF2's timestamps, the Peruse fields the event
// carried, the datatypes a nonblocking operation names at its start. What needs every event
// in order (times in ns, omitted fields, completions' datatypes) is the EventSequencer's, so
// that several decoders can read at once and their streams be merged (event_merge.hpp).
//
// The archive may be damaged: every id an event names is checked before it indexes anything,
// and a location that gives more events than its definition announces stops the reading.
#pragma once

#include <otf2/otf2.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "reader/archive_reader.hpp"
#include "reader/event_batch.hpp"

namespace perusetrace::archive {

inline constexpr std::uint32_t kNotOurs = 0xffffffffu;  // an OTF2 location not in the tools'

// The text of the last error OTF2 reported on this thread (its error callback keeps it).
std::string& last_otf2_error();

// OTF2 failed, or ran past the events announced, while reading some location's events; which
// file it was is for the caller to find out (what() says what happened).
class EventFilesDamaged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What every decoder of an archive reads events with, set up once from its definitions.
struct DecoderSetup {
  const Definitions* defs = nullptr;
  std::string anchor;  // the .otf2 file
  static constexpr OTF2_AttributeRef kNoAttribute = OTF2_UNDEFINED_ATTRIBUTE;
  OTF2_AttributeRef attr_request = 0, attr_peer = 0, attr_tag = 0, attr_bytes = 0,
                    attr_operation = 0, attr_comm = 0, attr_state = 0, attr_activity = 0,
                    attr_function = 0, attr_weight = 0;
  // Absent from archives written before perusetrace recorded them.
  OTF2_AttributeRef attr_size_at_open = kNoAttribute, attr_io_handle = kNoAttribute,
                    attr_io_size = kNoAttribute, attr_datatype = kNoAttribute,
                    attr_send_datatype = kNoAttribute, attr_recv_datatype = kNoAttribute,
                    attr_poll_calls = kNoAttribute, attr_poll_inside = kNoAttribute;
  std::unordered_map<OTF2_StringRef, std::uint32_t> datatype_of_string;  // -> Definitions index
  std::vector<std::vector<std::uint32_t>> class_members;  // metric members by class ref
  // Location index by OTF2 location id: a table while the ids are few and small (perusetrace's
  // are thread * ranks + rank), else a hash map.
  std::vector<std::uint32_t> location_table;
  std::unordered_map<OTF2_LocationRef, std::uint32_t> location_map;

  // Which regions are Peruse events (by region id), and which Peruse field (trace::PeruseField,
  // 0 for none) each attribute id is, from the definitions.
  std::vector<std::uint8_t> peruse_region;
  std::vector<std::uint8_t> field_of_attribute;
  unsigned peruse_field(OTF2_AttributeRef id) const {
    return id < field_of_attribute.size() ? field_of_attribute[id] : 0;
  }

  void prepare();          // the tables above, from defs and the attribute ids
  void index_locations();  // location_table or location_map, from defs->locations
  std::string event_file(OTF2_LocationRef l) const;
  std::string local_definitions_file(OTF2_LocationRef l) const;
};

// Events first, first + 1, ... of one location, `count` of them (OTF2 numbers a location's
// events from 1; each chunk of its event file says which it holds).
struct EventRange {
  std::uint64_t first = 0, count = 0;
};

class EventDecoder {
 public:
  // `locations` are indices into Definitions::locations.
  EventDecoder(const DecoderSetup& setup, std::vector<std::uint32_t> locations);

  // Reads every event of the locations, in OTF2's order, as records into `out`;
  // `after_each_read(n)` is told the number of events read so far now and then. Throws
  // ArchiveError (worded for the user) or EventFilesDamaged.
  void run(BatchWriter& out, const std::function<void(std::uint64_t)>& after_each_read);

  // Reads only `ranges` of its one location, one after the other, each starting where a chunk
  // of its event file starts. The batch holding a range's last records is handed over marked
  // EventBatch::ends_range, also when the range gave no records.
  void run_ranges(BatchWriter& out, const std::vector<EventRange>& ranges,
                  const std::function<void(std::uint64_t)>& after_each_read);

  std::uint64_t announced() const { return announced_; }  // events the definitions announce

  struct State;  // what the OTF2 callbacks see

 private:
  using Reader = std::unique_ptr<OTF2_Reader, OTF2_ErrorCode (*)(OTF2_Reader*)>;
  // A reader of its own with the locations selected, their local definitions read.
  Reader open() const;
  [[noreturn]] void incomplete(const std::string& what) const;

  const DecoderSetup& setup_;
  std::vector<std::uint32_t> locations_;
  std::uint64_t announced_ = 0;
};

}  // namespace perusetrace::archive
