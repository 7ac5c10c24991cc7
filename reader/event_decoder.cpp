#include "reader/event_decoder.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <exception>
#include <memory>
#include <new>
#include <utility>

#include "reader/event_sequencer.hpp"
#include "reader/otf2_callback.hpp"
#include "record/peruse_fields.hpp"

namespace perusetrace::archive {

std::string& last_otf2_error() {
  thread_local std::string text;
  return text;
}

void DecoderSetup::prepare() {
  peruse_region.clear();
  for (const RegionDef& r : defs->regions) peruse_region.push_back(r.kind == RegionKind::Peruse);
  field_of_attribute.clear();
  const std::pair<OTF2_AttributeRef, unsigned> fields[] = {{attr_request, trace::kFieldRequest},
                                                           {attr_peer, trace::kFieldPeer},
                                                           {attr_tag, trace::kFieldTag},
                                                           {attr_bytes, trace::kFieldBytes},
                                                           {attr_operation, trace::kFieldOperation},
                                                           {attr_comm, trace::kFieldComm}};
  // perusetrace numbers its attributes from 0: a table of a few entries (a damaged archive's
  // larger ids simply name no field: the table stops at 2^16).
  for (const auto& [id, field] : fields) {
    if (id >= (1u << 16)) continue;
    if (field_of_attribute.size() <= id) field_of_attribute.resize(id + 1, 0);
    if (field_of_attribute[id] == 0) field_of_attribute[id] = static_cast<std::uint8_t>(field);
  }
  index_locations();
}

void DecoderSetup::index_locations() {
  location_table.clear();
  location_map.clear();
  std::uint64_t largest = 0;
  for (const LocationDef& l : defs->locations) largest = std::max(largest, l.id);
  const bool small = largest < 4 * defs->locations.size() + 4096;
  if (small) location_table.assign(largest + 1, kNotOurs);
  for (std::uint32_t i = 0; i < defs->locations.size(); ++i) {
    if (small) {
      location_table[defs->locations[i].id] = i;
    } else {
      location_map[defs->locations[i].id] = i;
    }
  }
}

std::string DecoderSetup::event_file(OTF2_LocationRef l) const {
  return anchor.substr(0, anchor.size() - 5) + "/" + std::to_string(l) + ".evt";
}

std::string DecoderSetup::local_definitions_file(OTF2_LocationRef l) const {
  return anchor.substr(0, anchor.size() - 5) + "/" + std::to_string(l) + ".def";
}

struct EventDecoder::State {
  const DecoderSetup& setup;
  const Definitions& defs;
  BatchWriter* out = nullptr;
  // An exception thrown inside an OTF2 callback must not unwind through OTF2's C frames: it is
  // kept here, the callback interrupts OTF2, and it is thrown again once OTF2 has returned.
  std::exception_ptr failure;
  // Events each location may still give (its definition's count); by location index.
  std::vector<std::uint64_t> left;
  OTF2_LocationRef last_location = OTF2_UNDEFINED_LOCATION;
  std::uint32_t last_index = 0;

  // The location's index, or kNotOurs for one the definitions do not have. Counts the event: a
  // location with more events than its definition announces is being read past its end.
  std::uint32_t loc(OTF2_LocationRef l) {
    // Events come in runs per location: the last one found saves most lookups.
    if (l != last_location) {
      std::uint32_t i = kNotOurs;
      if (l < setup.location_table.size()) {
        i = setup.location_table[l];
      } else if (!setup.location_map.empty()) {
        const auto it = setup.location_map.find(l);
        if (it != setup.location_map.end()) i = it->second;
      }
      if (i == kNotOurs) return kNotOurs;
      last_location = l;
      last_index = i;
    }
    if (left[last_index]-- == 0) {
      const LocationDef& def = defs.locations[last_index];
      throw ArchiveError(fmt::format(
          "{}: location {} ({}) has more events than the {} its definition announces, so its "
          "event file {} is damaged. The archive cannot be read: trace the program again.",
          setup.anchor, def.id, def.name, def.events, setup.event_file(def.id)));
    }
    return last_index;
  }

  // The datatype an attribute of `a` names, or kNoDatatype.
  std::uint32_t datatype_in(OTF2_AttributeList* a, OTF2_AttributeRef attr) const {
    OTF2_Type type;
    OTF2_AttributeValue value;
    if (a == nullptr || attr == DecoderSetup::kNoAttribute ||
        OTF2_AttributeList_GetAttributeByID(a, attr, &type, &value) != OTF2_SUCCESS ||
        type != OTF2_TYPE_STRING)
      return kNoDatatype;
    const auto it = setup.datatype_of_string.find(value.stringRef);
    return it == setup.datatype_of_string.end() ? kNoDatatype : it->second;
  }
};

namespace {

using State = EventDecoder::State;

// Runs a callback's body; an exception becomes OTF2_CALLBACK_INTERRUPT (see State::failure).
template <class Body>
OTF2_CallbackCode guarded(void* data, Body&& body) {
  return guarded_callback<State>(data, std::forward<Body>(body));
}

// An event of a location this reader knows: body(s, location index, OTF2 timestamp). Events of
// locations without a definition are dropped (none are selected for reading).
template <typename Body>
OTF2_CallbackCode located(void* data, OTF2_LocationRef l, OTF2_TimeStamp t, Body&& body) {
  return guarded(data, [&](State& s) {
    if (const std::uint32_t i = s.loc(l); i != kNotOurs) body(s, i, std::uint64_t{t});
  });
}

// The OTF2 type of each Peruse field, by the field's bit (record/peruse_fields.hpp): an
// attribute of another type is taken as absent.
constexpr OTF2_Type kPeruseFieldType[] = {OTF2_TYPE_UINT64, OTF2_TYPE_INT32, OTF2_TYPE_INT32,
                                          OTF2_TYPE_UINT64, OTF2_TYPE_UINT8, OTF2_TYPE_COMM};
static_assert(trace::kFieldRequest == 1 && trace::kFieldPeer == 2 && trace::kFieldTag == 4 &&
              trace::kFieldBytes == 8 && trace::kFieldOperation == 16 && trace::kFieldComm == 32);

OTF2_CallbackCode on_enter(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList* a,
                           OTF2_RegionRef region) {
  return located(d, l, t, [&](State& s, std::uint32_t i, std::uint64_t ts) {
    if (region >= s.setup.peruse_region.size()) return;
    if (!s.setup.peruse_region[region]) {
      s.out->enter(i, ts, region);
      return;
    }
    // Archives of earlier versions wrote the fields a request repeats once: the sequencer
    // completes them (record/peruse_fields.hpp) from the fields `present`.
    EventRecord& r = s.out->add(RecordKind::Peruse, i, ts);  // as BatchWriter::peruse packs
    const trace::PeruseFieldValues defaults;
    r.a = static_cast<std::uint32_t>(region);
    r.b = static_cast<std::uint32_t>(defaults.peer);
    r.c = static_cast<std::uint32_t>(defaults.tag);
    r.d = kNoComm;
    r.x = defaults.request;
    r.y = defaults.bytes;
    r.flag = defaults.operation;
    unsigned present = 0;
    // One pass over the attributes the record has: asking OTF2 for each field by id makes it
    // build and format an error message for every absent one, a quarter of a conversion's
    // instructions. Taking each from the list's head (OTF2 empties the list after the callback
    // anyway) saves walking it from the start for every index. A field of the wrong type counts
    // as absent.
    const std::uint32_t n = a == nullptr ? 0 : OTF2_AttributeList_GetNumberOfElements(a);
    for (std::uint32_t k = 0; k < n; ++k) {
      OTF2_AttributeRef id;
      OTF2_Type type;
      OTF2_AttributeValue value;
      if (OTF2_AttributeList_PopAttribute(a, &id, &type, &value) != OTF2_SUCCESS) break;
      const unsigned field = s.setup.peruse_field(id);
      if (field == 0 || type != kPeruseFieldType[std::countr_zero(field)]) continue;
      present |= field;
      switch (field) {
        case trace::kFieldRequest:
          r.x = value.uint64;
          break;
        case trace::kFieldPeer:
          r.b = static_cast<std::uint32_t>(value.int32);
          break;
        case trace::kFieldTag:
          r.c = static_cast<std::uint32_t>(value.int32);
          break;
        case trace::kFieldBytes:
          r.y = value.uint64;
          break;
        case trace::kFieldOperation:
          r.flag = value.uint8;
          break;
        case trace::kFieldComm:
          r.d = value.commRef == OTF2_UNDEFINED_COMM ? kNoComm : value.commRef;
          break;
      }
    }
    r.aux = static_cast<std::uint8_t>(present);
  });
}
OTF2_CallbackCode on_sample(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList* a,
                            OTF2_CallingContextRef context, uint32_t, OTF2_InterruptGeneratorRef) {
  return located(d, l, t, [&](State& s, std::uint32_t i, std::uint64_t ts) {
    if (context >= s.defs.contexts.size()) return;
    Sample sample;
    sample.context = static_cast<std::uint32_t>(context);
    const std::uint32_t n = a == nullptr ? 0 : OTF2_AttributeList_GetNumberOfElements(a);
    for (std::uint32_t k = 0; k < n; ++k) {
      OTF2_AttributeRef id;
      OTF2_Type type;
      OTF2_AttributeValue value;
      if (OTF2_AttributeList_GetAttributeByIndex(a, k, &id, &type, &value) != OTF2_SUCCESS)
        continue;
      if (id == s.setup.attr_state && type == OTF2_TYPE_UINT8)
        sample.state = value.uint8;
      else if (id == s.setup.attr_activity && type == OTF2_TYPE_UINT8)
        sample.activity = value.uint8;
      else if (id == s.setup.attr_function && type == OTF2_TYPE_REGION &&
               value.regionRef < s.defs.regions.size())
        sample.mpi_function = static_cast<std::uint32_t>(value.regionRef);
      else if (id == s.setup.attr_weight && type == OTF2_TYPE_UINT32 && value.uint32 > 0)
        sample.weight = value.uint32;
    }
    s.out->sample(i, ts, sample);
  });
}
// The attribute `id` of type `type` in `a`, if it is there.
bool attribute(OTF2_AttributeList* a, OTF2_AttributeRef id, OTF2_Type type,
               OTF2_AttributeValue& out) {
  if (a == nullptr || id == OTF2_UNDEFINED_ATTRIBUTE) return false;
  OTF2_Type got;
  return OTF2_AttributeList_GetAttributeByID(a, id, &got, &out) == OTF2_SUCCESS && got == type;
}

OTF2_CallbackCode on_leave(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList* a,
                           OTF2_RegionRef region) {
  return located(d, l, t, [&](State& s, std::uint32_t i, std::uint64_t ts) {
    if (region >= s.defs.regions.size()) return;
    if (s.defs.regions[region].kind == RegionKind::Peruse) return;
    // MPI_File_set_size and MPI_File_preallocate name their handle and size here.
    OTF2_AttributeValue handle, size;
    if (attribute(a, s.setup.attr_io_handle, OTF2_TYPE_IO_HANDLE, handle) &&
        attribute(a, s.setup.attr_io_size, OTF2_TYPE_UINT64, size) &&
        handle.ioHandleRef < s.defs.io_handles.size())
      s.out->io_resize(i, ts, static_cast<std::uint32_t>(handle.ioHandleRef),
                       {static_cast<std::uint32_t>(region), size.uint64});
    OTF2_AttributeValue calls, inside;
    if (attribute(a, s.setup.attr_poll_calls, OTF2_TYPE_UINT64, calls) &&
        attribute(a, s.setup.attr_poll_inside, OTF2_TYPE_UINT64, inside) && calls.uint64 > 0)
      s.out->polls_folded(i, ts, {static_cast<std::uint32_t>(region), calls.uint64, inside.uint64});
    s.out->leave(i, ts, region);
  });
}

// ---- MPI-IO ------------------------------------------------------------------------------

// An I/O event naming handle `h`, when the definitions have it.
template <typename Body>
OTF2_CallbackCode on_handle(void* d, OTF2_LocationRef l, OTF2_TimeStamp t, OTF2_IoHandleRef h,
                            Body&& body) {
  return located(d, l, t, [&](State& s, std::uint32_t i, std::uint64_t ts) {
    if (h < s.defs.io_handles.size()) body(s, i, ts, static_cast<std::uint32_t>(h));
  });
}
OTF2_CallbackCode on_io_create(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList* a,
                               OTF2_IoHandleRef h, OTF2_IoAccessMode, OTF2_IoCreationFlag,
                               OTF2_IoStatusFlag) {
  return on_handle(d, l, t, h, [&](State& s, std::uint32_t i, std::uint64_t ts, std::uint32_t hi) {
    OTF2_AttributeValue size;
    const bool known = attribute(a, s.setup.attr_size_at_open, OTF2_TYPE_UINT64, size);
    s.out->io_handle_created(i, ts, hi, known ? size.uint64 : kUnknownSize);
  });
}
OTF2_CallbackCode on_io_destroy(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                                OTF2_IoHandleRef h) {
  return on_handle(d, l, t, h, [&](State& s, std::uint32_t i, std::uint64_t ts, std::uint32_t hi) {
    s.out->io_handle_destroyed(i, ts, hi);
  });
}
OTF2_CallbackCode on_io_begin(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList* a,
                              OTF2_IoHandleRef h, OTF2_IoOperationMode mode,
                              OTF2_IoOperationFlag flags, uint64_t bytes, uint64_t matching) {
  return on_handle(d, l, t, h, [&](State& s, std::uint32_t i, std::uint64_t ts, std::uint32_t hi) {
    IoBegin op;
    op.mode = mode == OTF2_IO_OPERATION_MODE_WRITE   ? IoMode::Write
              : mode == OTF2_IO_OPERATION_MODE_FLUSH ? IoMode::Flush
                                                     : IoMode::Read;
    op.flags = flags & (kIoNonBlocking | kIoCollective);
    op.bytes = bytes;
    op.matching = matching;
    s.out->io_begin(i, ts, hi, op);
    EventRecord& r = s.out->last();
    r.aux = kKeepsDatatypes;
    r.c = s.datatype_in(a, s.setup.attr_datatype);
  });
}
OTF2_CallbackCode on_io_complete(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                                 OTF2_IoHandleRef h, uint64_t bytes, uint64_t matching) {
  return on_handle(d, l, t, h, [&](State& s, std::uint32_t i, std::uint64_t ts, std::uint32_t hi) {
    s.out->io_complete(i, ts, hi, {bytes, matching});
    s.out->last().aux = kLooksUpDatatypes;
    s.out->datatype_use(i, ts, {kNoDatatype, DatatypeUse::FileRead, bytes});
    s.out->last().aux = kFromCompletion;
  });
}
OTF2_CallbackCode on_io_seek(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                             OTF2_IoHandleRef h, int64_t offset, OTF2_IoSeekOption whence,
                             uint64_t reached) {
  return on_handle(d, l, t, h, [&](State& s, std::uint32_t i, std::uint64_t ts, std::uint32_t hi) {
    const IoSeekFrom from = whence == OTF2_IO_SEEK_FROM_START     ? IoSeekFrom::Start
                            : whence == OTF2_IO_SEEK_FROM_CURRENT ? IoSeekFrom::Current
                            : whence == OTF2_IO_SEEK_FROM_END     ? IoSeekFrom::End
                                                                  : IoSeekFrom::Other;
    s.out->io_seek(i, ts, hi, {offset, from, reached});
  });
}
OTF2_CallbackCode on_io_delete(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                               OTF2_IoParadigmRef, OTF2_IoFileRef file) {
  return located(d, l, t, [&](State& s, std::uint32_t i, std::uint64_t ts) {
    if (file < s.defs.files.size()) s.out->io_delete(i, ts, static_cast<std::uint32_t>(file));
  });
}
std::uint32_t comm_of(OTF2_CommRef c) {
  return c == OTF2_UNDEFINED_COMM ? kNoComm : c;
}
// The datatype named by `attr` in `a`, right after the event it belongs to.
void use_datatype(State& s, std::uint32_t i, std::uint64_t ts, OTF2_AttributeList* a,
                  OTF2_AttributeRef attr, DatatypeUse use, std::uint64_t bytes) {
  const std::uint32_t type = s.datatype_in(a, attr);
  if (type != kNoDatatype) s.out->datatype_use(i, ts, {type, use, bytes});
}
// A send or a receive (Kind), blocking or not: its datatype counts as sent or received.
OTF2_CallbackCode message(void* d, OTF2_LocationRef l, OTF2_TimeStamp t, OTF2_AttributeList* a,
                          const PointToPoint& m) {
  return located(d, l, t, [&](State& s, std::uint32_t i, std::uint64_t ts) {
    s.out->point_to_point(i, ts, m);
    use_datatype(s, i, ts, a, s.setup.attr_datatype,
                 m.kind == P2pKind::Send ? DatatypeUse::Send : DatatypeUse::Receive, m.bytes);
  });
}
template <P2pKind Kind>
OTF2_CallbackCode on_blocking(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList* a,
                              uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes) {
  return message(d, l, t, a, {Kind, peer, comm_of(comm), tag, bytes, 0, true});
}
template <P2pKind Kind>
OTF2_CallbackCode on_nonblocking(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                 OTF2_AttributeList* a, uint32_t peer, OTF2_CommRef comm,
                                 uint32_t tag, uint64_t bytes, uint64_t request) {
  return message(d, l, t, a, {Kind, peer, comm_of(comm), tag, bytes, request, false});
}
// A request's own event (an isend completed, an irecv's request): nothing but the request.
template <P2pKind Kind>
OTF2_CallbackCode on_request(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                             uint64_t request) {
  return located(d, l, t, [&](State& s, std::uint32_t i, std::uint64_t ts) {
    s.out->point_to_point(i, ts, {Kind, 0, kNoComm, 0, 0, request, false});
  });
}
// A collective as it completed, with the datatypes its send and receive buffers had.
void collective_done(State& s, std::uint32_t i, std::uint64_t ts, const Collective& c,
                     std::uint32_t send_type, std::uint32_t recv_type) {
  s.out->collective(i, ts, c);
  if (send_type != kNoDatatype)
    s.out->datatype_use(i, ts, {send_type, DatatypeUse::CollectiveSend, c.sent});
  if (recv_type != kNoDatatype)
    s.out->datatype_use(i, ts, {recv_type, DatatypeUse::CollectiveReceive, c.received});
}
Collective collective_of(OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t received,
                         uint64_t request) {
  return Collective{comm_of(comm), root == OTF2_UNDEFINED_UINT32 ? kNoRoot : root, sent, received,
                    request};
}
OTF2_CallbackCode on_collective_end(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                    OTF2_AttributeList* a, OTF2_CollectiveOp, OTF2_CommRef comm,
                                    uint32_t root, uint64_t sent, uint64_t received) {
  return located(d, l, t, [&](State& s, std::uint32_t i, std::uint64_t ts) {
    collective_done(s, i, ts, collective_of(comm, root, sent, received, 0),
                    s.datatype_in(a, s.setup.attr_send_datatype),
                    s.datatype_in(a, s.setup.attr_recv_datatype));
  });
}
OTF2_CallbackCode on_collective_request(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                        OTF2_AttributeList* a, uint64_t request) {
  return located(d, l, t, [&](State& s, std::uint32_t i, std::uint64_t ts) {
    s.out->collective_request(i, ts, request);
    EventRecord& r = s.out->last();
    r.aux = kKeepsDatatypes;
    r.a = s.datatype_in(a, s.setup.attr_send_datatype);
    r.b = s.datatype_in(a, s.setup.attr_recv_datatype);
  });
}
OTF2_CallbackCode on_collective_complete(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                         OTF2_AttributeList*, OTF2_CollectiveOp, OTF2_CommRef comm,
                                         uint32_t root, uint64_t sent, uint64_t received,
                                         uint64_t request) {
  return located(d, l, t, [&](State& s, std::uint32_t i, std::uint64_t ts) {
    // The datatypes its start named are the sequencer's to find.
    s.out->collective(i, ts, collective_of(comm, root, sent, received, request));
    s.out->last().aux = kLooksUpDatatypes;
    s.out->datatype_use(i, ts, {kNoDatatype, DatatypeUse::CollectiveSend, sent});
    s.out->last().aux = kFromCompletion;
    s.out->datatype_use(i, ts, {kNoDatatype, DatatypeUse::CollectiveReceive, received});
    s.out->last().aux = kFromCompletion;
  });
}
OTF2_CallbackCode on_cancelled(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                               uint64_t request) {
  return located(d, l, t, [&](State& s, std::uint32_t i, std::uint64_t ts) {
    s.out->point_to_point(i, ts, {P2pKind::Cancelled, 0, kNoComm, 0, 0, request, false});
  });
}
// ---- one-sided communication: every Rma* record as one RmaEvent -------------------------

std::uint32_t window_index(const State& s, OTF2_RmaWinRef win) {
  return win < s.defs.windows.size() ? static_cast<std::uint32_t>(win) : kNoWindow;
}

template <typename Fill>
OTF2_CallbackCode rma_event(void* d, OTF2_LocationRef l, OTF2_TimeStamp t, RmaEventKind kind,
                            OTF2_RmaWinRef win, Fill&& fill) {
  return located(d, l, t, [&](State& s, std::uint32_t i, std::uint64_t ts) {
    RmaEvent e;
    e.kind = kind;
    e.window = window_index(s, win);
    fill(e);
    s.out->rma(i, ts, e);
  });
}

OTF2_CallbackCode on_rma_win(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                             OTF2_RmaWinRef win, RmaEventKind kind) {
  return rma_event(d, l, t, kind, win, [](RmaEvent&) {});
}
OTF2_CallbackCode on_rma_win_create(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                    OTF2_AttributeList* a, OTF2_RmaWinRef win) {
  return on_rma_win(l, t, d, a, win, RmaEventKind::WinCreate);
}
OTF2_CallbackCode on_rma_win_destroy(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                     OTF2_AttributeList* a, OTF2_RmaWinRef win) {
  return on_rma_win(l, t, d, a, win, RmaEventKind::WinDestroy);
}
OTF2_CallbackCode on_rma_wait_change(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                     OTF2_AttributeList* a, OTF2_RmaWinRef win) {
  return on_rma_win(l, t, d, a, win, RmaEventKind::WaitChange);
}
OTF2_CallbackCode on_rma_collective_begin(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                          OTF2_AttributeList*) {
  return rma_event(d, l, t, RmaEventKind::CollectiveBegin, OTF2_UNDEFINED_RMA_WIN,
                   [](RmaEvent&) {});
}
OTF2_CallbackCode on_rma_collective_end(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                        OTF2_AttributeList*, OTF2_CollectiveOp,
                                        OTF2_RmaSyncLevel level, OTF2_RmaWinRef win, uint32_t,
                                        uint64_t sent, uint64_t received) {
  return rma_event(d, l, t, RmaEventKind::CollectiveEnd, win, [&](RmaEvent& e) {
    e.sync_level = level;
    e.sent = sent;
    e.received = received;
  });
}
OTF2_CallbackCode on_rma_group_sync(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                    OTF2_AttributeList*, OTF2_RmaSyncLevel level,
                                    OTF2_RmaWinRef win, OTF2_GroupRef group) {
  return rma_event(d, l, t, RmaEventKind::GroupSync, win, [&](RmaEvent& e) {
    e.sync_level = level;
    e.group = group;
  });
}
template <RmaEventKind Kind>
OTF2_CallbackCode on_rma_lock(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                              OTF2_RmaWinRef win, uint32_t remote, uint64_t, OTF2_LockType type) {
  return rma_event(d, l, t, Kind, win, [&](RmaEvent& e) {
    e.target = remote;
    e.exclusive = type == OTF2_LOCK_EXCLUSIVE;
  });
}
OTF2_CallbackCode on_rma_release_lock(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                      OTF2_AttributeList*, OTF2_RmaWinRef win, uint32_t remote,
                                      uint64_t) {
  return rma_event(d, l, t, RmaEventKind::ReleaseLock, win,
                   [&](RmaEvent& e) { e.target = remote; });
}
OTF2_CallbackCode on_rma_sync(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                              OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaSyncType) {
  return rma_event(d, l, t, RmaEventKind::Sync, win, [&](RmaEvent& e) { e.target = remote; });
}
// A put's bytes are sent, a get's received.
template <RmaEventKind Kind>
OTF2_CallbackCode on_rma_transfer(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                  OTF2_AttributeList*, OTF2_RmaWinRef win, uint32_t remote,
                                  uint64_t bytes, uint64_t matching) {
  return rma_event(d, l, t, Kind, win, [&](RmaEvent& e) {
    e.target = remote;
    (Kind == RmaEventKind::Put ? e.sent : e.received) = bytes;
    e.matching = matching;
  });
}
OTF2_CallbackCode on_rma_atomic(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                                OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaAtomicType,
                                uint64_t sent, uint64_t received, uint64_t matching) {
  return rma_event(d, l, t, RmaEventKind::Atomic, win, [&](RmaEvent& e) {
    e.target = remote;
    e.sent = sent;
    e.received = received;
    e.matching = matching;
  });
}
template <RmaEventKind Kind>
OTF2_CallbackCode on_rma_completion(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                    OTF2_AttributeList*, OTF2_RmaWinRef win, uint64_t matching) {
  return rma_event(d, l, t, Kind, win, [&](RmaEvent& e) { e.matching = matching; });
}

// A metric event gives one value per member of its class; the tools see each member's value
// (metric ids are member ids).
OTF2_CallbackCode on_metric(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                            OTF2_MetricRef metric, uint8_t n, const OTF2_Type* types,
                            const OTF2_MetricValue* values) {
  return located(d, l, t, [&](State& s, std::uint32_t i, std::uint64_t ts) {
    if (metric >= s.setup.class_members.size()) return;
    const std::vector<std::uint32_t>& members = s.setup.class_members[metric];
    for (std::size_t m = 0; m < members.size() && m < n; ++m) {
      switch (types[m]) {
        case OTF2_TYPE_INT64:
          s.out->metric(i, ts, members[m], values[m].signed_int);
          break;
        case OTF2_TYPE_UINT64:
          s.out->metric(i, ts, members[m], static_cast<std::int64_t>(values[m].unsigned_int));
          break;
        default:
          s.out->real_metric(i, ts, members[m], values[m].floating_point);
      }
    }
  });
}

// Every event callback, as OTF2's global event reader calls it, and the name OTF2 gives its
// kind (the setters of both readers' callback structures are named after it).
#define PERUSETRACE_EVENT_CALLBACKS(X)                                              \
  X(Enter, on_enter)                                                                \
  X(Leave, on_leave)                                                                \
  X(MpiSend, on_blocking<P2pKind::Send>)                                            \
  X(MpiIsend, on_nonblocking<P2pKind::Send>)                                        \
  X(MpiIsendComplete, on_request<P2pKind::SendComplete>)                            \
  X(MpiIrecvRequest, on_request<P2pKind::RecvRequest>)                              \
  X(MpiRecv, on_blocking<P2pKind::Recv>)                                            \
  X(MpiIrecv, on_nonblocking<P2pKind::Recv>)                                        \
  X(MpiRequestCancelled, on_cancelled)                                              \
  X(Metric, on_metric)                                                              \
  X(CallingContextSample, on_sample)                                                \
  X(IoCreateHandle, on_io_create)                                                   \
  X(IoDestroyHandle, on_io_destroy)                                                 \
  X(IoOperationBegin, on_io_begin)                                                  \
  X(IoOperationComplete, on_io_complete)                                            \
  X(MpiCollectiveEnd, on_collective_end)                                            \
  X(NonBlockingCollectiveRequest, on_collective_request)                            \
  X(NonBlockingCollectiveComplete, on_collective_complete)                          \
  X(IoSeek, on_io_seek)                                                             \
  X(IoDeleteFile, on_io_delete)                                                     \
  X(RmaWinCreate, on_rma_win_create)                                                \
  X(RmaWinDestroy, on_rma_win_destroy)                                              \
  X(RmaCollectiveBegin, on_rma_collective_begin)                                    \
  X(RmaCollectiveEnd, on_rma_collective_end)                                        \
  X(RmaGroupSync, on_rma_group_sync)                                                \
  X(RmaRequestLock, on_rma_lock<RmaEventKind::RequestLock>)                         \
  X(RmaAcquireLock, on_rma_lock<RmaEventKind::AcquireLock>)                         \
  X(RmaTryLock, on_rma_lock<RmaEventKind::TryLock>)                                 \
  X(RmaReleaseLock, on_rma_release_lock)                                            \
  X(RmaSync, on_rma_sync)                                                           \
  X(RmaWaitChange, on_rma_wait_change)                                              \
  X(RmaPut, on_rma_transfer<RmaEventKind::Put>)                                     \
  X(RmaGet, on_rma_transfer<RmaEventKind::Get>)                                     \
  X(RmaAtomic, on_rma_atomic)                                                       \
  X(RmaOpCompleteBlocking, on_rma_completion<RmaEventKind::CompleteBlocking>)       \
  X(RmaOpCompleteNonBlocking, on_rma_completion<RmaEventKind::CompleteNonBlocking>) \
  X(RmaOpCompleteRemote, on_rma_completion<RmaEventKind::CompleteRemote>)           \
  X(RmaOpTest, on_rma_completion<RmaEventKind::Test>)

// A global reader's callback as a local reader's: the same, with the event's position in its
// location (which the callbacks do not need) after the time.
template <auto Global>
struct Local;
template <typename... Args, OTF2_CallbackCode (*Global)(OTF2_LocationRef, OTF2_TimeStamp, void*,
                                                        OTF2_AttributeList*, Args...)>
struct Local<Global> {
  static OTF2_CallbackCode call(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                                OTF2_AttributeList* a, Args... args) {
    return Global(l, t, d, a, args...);
  }
};

using GlobalCallbacks =
    std::unique_ptr<OTF2_GlobalEvtReaderCallbacks, void (*)(OTF2_GlobalEvtReaderCallbacks*)>;
using LocalCallbacks = std::unique_ptr<OTF2_EvtReaderCallbacks, void (*)(OTF2_EvtReaderCallbacks*)>;

GlobalCallbacks global_callbacks() {
  GlobalCallbacks c(OTF2_GlobalEvtReaderCallbacks_New(), OTF2_GlobalEvtReaderCallbacks_Delete);
  if (!c) throw std::bad_alloc();
#define PERUSETRACE_SET_GLOBAL(kind, callback) \
  OTF2_GlobalEvtReaderCallbacks_Set##kind##Callback(c.get(), callback);
  PERUSETRACE_EVENT_CALLBACKS(PERUSETRACE_SET_GLOBAL)
#undef PERUSETRACE_SET_GLOBAL
  return c;
}

LocalCallbacks local_callbacks() {
  LocalCallbacks c(OTF2_EvtReaderCallbacks_New(), OTF2_EvtReaderCallbacks_Delete);
  if (!c) throw std::bad_alloc();
#define PERUSETRACE_SET_LOCAL(kind, callback) \
  OTF2_EvtReaderCallbacks_Set##kind##Callback(c.get(), &Local<callback>::call);
  PERUSETRACE_EVENT_CALLBACKS(PERUSETRACE_SET_LOCAL)
#undef PERUSETRACE_SET_LOCAL
  return c;
}

constexpr std::uint64_t kEventsPerRead = 1 << 16;

}  // namespace

EventDecoder::EventDecoder(const DecoderSetup& setup, std::vector<std::uint32_t> locations)
    : setup_(setup), locations_(std::move(locations)) {
  for (const std::uint32_t i : locations_) {
    const std::uint64_t n = setup_.defs->locations[i].events;
    announced_ = n > ~announced_ ? ~std::uint64_t{0} : announced_ + n;  // saturates
  }
}

[[noreturn]] void EventDecoder::incomplete(const std::string& what) const {
  const std::string& otf2 = last_otf2_error();
  throw ArchiveError(
      fmt::format("{}: {}{}. The archive is incomplete or damaged; trace the program again.",
                  setup_.anchor, what, otf2.empty() ? "" : " (" + otf2 + ")"));
}

EventDecoder::Reader EventDecoder::open() const {
  const Definitions& defs = *setup_.defs;
  Reader reader(OTF2_Reader_Open(setup_.anchor.c_str()), OTF2_Reader_Close);
  if (!reader || OTF2_Reader_SetSerialCollectiveCallbacks(reader.get()) != OTF2_SUCCESS)
    incomplete("OTF2 cannot open it again to read the events");
  for (const std::uint32_t i : locations_)
    if (OTF2_Reader_SelectLocation(reader.get(), defs.locations[i].id) != OTF2_SUCCESS)
      incomplete(fmt::format("location {} cannot be selected for reading", defs.locations[i].id));
  // The local definitions carry each location's communicator mapping table: without them the
  // events' communicators would be read as other ones.
  if (OTF2_Reader_OpenDefFiles(reader.get()) != OTF2_SUCCESS)
    incomplete("the local definition files cannot be opened");
  if (OTF2_Reader_OpenEvtFiles(reader.get()) != OTF2_SUCCESS)
    incomplete("the event files cannot be opened");
  for (const std::uint32_t i : locations_) {
    const LocationDef& l = defs.locations[i];
    const std::string local = setup_.local_definitions_file(l.id);
    OTF2_DefReader* d = OTF2_Reader_GetDefReader(reader.get(), l.id);
    if (d == nullptr) incomplete(fmt::format("{} cannot be opened", local));
    std::uint64_t read = 0;
    const OTF2_ErrorCode rc = OTF2_Reader_ReadAllLocalDefinitions(reader.get(), d, &read);
    OTF2_Reader_CloseDefReader(reader.get(), d);
    if (rc != OTF2_SUCCESS)
      throw ArchiveError(fmt::format(
          "{} is damaged: OTF2 cannot read the local definitions of location {} ({}). The "
          "archive cannot be read: trace the program again.",
          local, l.id,
          last_otf2_error().empty() ? OTF2_Error_GetDescription(rc) : last_otf2_error()));
    if (OTF2_Reader_GetEvtReader(reader.get(), l.id) == nullptr)
      incomplete(fmt::format("{} cannot be opened", setup_.event_file(l.id)));
  }
  OTF2_Reader_CloseDefFiles(reader.get());
  return reader;
}

void EventDecoder::run(BatchWriter& out,
                       const std::function<void(std::uint64_t)>& after_each_read) {
  const Definitions& defs = *setup_.defs;
  Reader reader = open();
  State s{setup_, defs, &out, nullptr, {}};
  s.left.assign(defs.locations.size(), 0);
  for (const std::uint32_t i : locations_) s.left[i] = defs.locations[i].events;
  // One location needs no merging: its own reader hands its events over as they are, without
  // the global reader's queue.
  OTF2_GlobalEvtReader* global = nullptr;
  OTF2_EvtReader* local = nullptr;
  GlobalCallbacks gc(nullptr, OTF2_GlobalEvtReaderCallbacks_Delete);
  LocalCallbacks lc(nullptr, OTF2_EvtReaderCallbacks_Delete);
  if (locations_.size() == 1) {
    local = OTF2_Reader_GetEvtReader(reader.get(), defs.locations[locations_.front()].id);
    lc = local_callbacks();
    if (local == nullptr ||
        OTF2_Reader_RegisterEvtCallbacks(reader.get(), local, lc.get(), &s) != OTF2_SUCCESS)
      incomplete("the events cannot be read");
  } else {
    global = OTF2_Reader_GetGlobalEvtReader(reader.get());
    if (global == nullptr) incomplete("the events cannot be read");
    gc = global_callbacks();
    if (OTF2_Reader_RegisterGlobalEvtCallbacks(reader.get(), global, gc.get(), &s) != OTF2_SUCCESS)
      incomplete("the events cannot be read");
  }
  std::uint64_t total = 0;
  for (;;) {
    std::uint64_t read = 0;
    const OTF2_ErrorCode rc =
        local != nullptr
            ? OTF2_Reader_ReadLocalEvents(reader.get(), local, kEventsPerRead, &read)
            : OTF2_Reader_ReadGlobalEvents(reader.get(), global, kEventsPerRead, &read);
    if (s.failure) std::rethrow_exception(s.failure);
    if (rc != OTF2_SUCCESS)
      throw EventFilesDamaged(fmt::format("reading the events failed after {} of {} ({})", total,
                                          announced_, last_otf2_error()));
    total += read;
    // The definitions say how many events each location wrote; reading more means OTF2 is
    // decoding something else than those events, and would not stop.
    if (total > announced_)
      throw EventFilesDamaged(
          fmt::format("the event files hold more events than the {} the "
                      "definitions announce, so one of them is damaged",
                      announced_));
    after_each_read(total);
    if (read < kEventsPerRead) break;
  }
  if (total != announced_)
    throw EventFilesDamaged(
        fmt::format("the event files end after {} of the {} events the "
                    "definitions announce",
                    total, announced_));
  if (global != nullptr) OTF2_Reader_CloseGlobalEvtReader(reader.get(), global);
  if (local != nullptr) OTF2_Reader_CloseEvtReader(reader.get(), local);
  OTF2_Reader_CloseEvtFiles(reader.get());
}

void EventDecoder::run_ranges(BatchWriter& out, const std::vector<EventRange>& ranges,
                              const std::function<void(std::uint64_t)>& after_each_read) {
  const Definitions& defs = *setup_.defs;
  if (locations_.size() != 1) throw std::logic_error("run_ranges reads one location");
  const LocationDef& l = defs.locations[locations_.front()];
  Reader reader = open();
  State s{setup_, defs, &out, nullptr, {}};
  s.left.assign(defs.locations.size(), 0);
  s.left[locations_.front()] = l.events;
  OTF2_EvtReader* local = OTF2_Reader_GetEvtReader(reader.get(), l.id);
  LocalCallbacks lc = local_callbacks();
  if (local == nullptr ||
      OTF2_Reader_RegisterEvtCallbacks(reader.get(), local, lc.get(), &s) != OTF2_SUCCESS)
    incomplete("the events cannot be read");
  std::uint64_t total = 0;
  for (const EventRange& range : ranges) {
    if (OTF2_EvtReader_Seek(local, range.first) != OTF2_SUCCESS)
      throw EventFilesDamaged(fmt::format("OTF2 cannot find event {} of location {} ({})",
                                          range.first, l.id, last_otf2_error()));
    for (std::uint64_t left = range.count; left > 0;) {
      std::uint64_t read = 0;
      const OTF2_ErrorCode rc =
          OTF2_Reader_ReadLocalEvents(reader.get(), local, std::min(left, kEventsPerRead), &read);
      if (s.failure) std::rethrow_exception(s.failure);
      if (rc != OTF2_SUCCESS || read == 0)
        throw EventFilesDamaged(fmt::format(
            "reading the events of location {} failed after {} of the {} from event {}{}", l.id,
            range.count - left + read, range.count, range.first,
            rc != OTF2_SUCCESS ? " (" + last_otf2_error() + ")" : ""));
      left -= std::min(left, read);
      total += read;
      after_each_read(total);
    }
    // The range's end, even when its events gave no records: the merge moves to the next range.
    out.batch()->ends_range = true;
    out.hand_over();
  }
  OTF2_Reader_CloseEvtReader(reader.get(), local);
  OTF2_Reader_CloseEvtFiles(reader.get());
}

}  // namespace perusetrace::archive
