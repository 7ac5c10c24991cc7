// trace_counts ARCHIVE: per location, how many events of each kind an OTF2 archive holds,
// as JSON. "defined" is the count the definitions promise, "read" what the events really
// are: a difference means records were lost. For traces too large for python3-otf2.
#include <otf2/otf2.h>

#include <cstdio>
#include <map>
#include <string>

namespace {

struct Location {
  std::uint64_t group = 0;
  std::uint64_t defined = 0;
  std::uint64_t read = 0;
  std::map<std::string, std::uint64_t> kinds;
};

struct State {
  std::map<OTF2_LocationRef, Location> locations;
  std::map<OTF2_RegionRef, OTF2_StringRef> region_names;
  std::map<OTF2_StringRef, std::string> strings;
};

Location& at(void* data, OTF2_LocationRef l) {
  return static_cast<State*>(data)->locations[l];
}

void count(void* data, OTF2_LocationRef l, const char* kind) {
  Location& loc = at(data, l);
  ++loc.read;
  ++loc.kinds[kind];
}

OTF2_CallbackCode def_string(void* data, OTF2_StringRef self, const char* s) {
  static_cast<State*>(data)->strings[self] = s;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode def_location(void* data, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType,
                               std::uint64_t events, OTF2_LocationGroupRef group) {
  Location& loc = at(data, self);
  loc.defined = events;
  loc.group = group;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode def_region(void* data, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef,
                             OTF2_StringRef, OTF2_RegionRole, OTF2_Paradigm, OTF2_RegionFlag,
                             OTF2_StringRef, std::uint32_t, std::uint32_t) {
  static_cast<State*>(data)->region_names[self] = name;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode enter(OTF2_LocationRef l, OTF2_TimeStamp, void* data, OTF2_AttributeList*,
                        OTF2_RegionRef region) {
  auto* s = static_cast<State*>(data);
  const std::string& name = s->strings[s->region_names[region]];
  count(data, l, name.rfind("PERUSE_COMM_", 0) == 0 ? name.c_str() : "Enter");
  if (name == "perusetrace flush") ++at(data, l).kinds["flush"];  // a drain of the buffer
  return OTF2_CALLBACK_SUCCESS;
}

#define COUNTER(fn, kind, ...)                                                              \
  OTF2_CallbackCode fn(OTF2_LocationRef l, OTF2_TimeStamp, void* data, OTF2_AttributeList*, \
                       __VA_ARGS__) {                                                       \
    count(data, l, kind);                                                                   \
    return OTF2_CALLBACK_SUCCESS;                                                           \
  }
COUNTER(leave, "Leave", OTF2_RegionRef)
COUNTER(mpi_send, "MpiSend", std::uint32_t, OTF2_CommRef, std::uint32_t, std::uint64_t)
COUNTER(mpi_recv, "MpiRecv", std::uint32_t, OTF2_CommRef, std::uint32_t, std::uint64_t)
COUNTER(mpi_isend, "MpiIsend", std::uint32_t, OTF2_CommRef, std::uint32_t, std::uint64_t,
        std::uint64_t)
COUNTER(mpi_isend_complete, "MpiIsendComplete", std::uint64_t)
COUNTER(mpi_irecv_request, "MpiIrecvRequest", std::uint64_t)
COUNTER(mpi_irecv, "MpiIrecv", std::uint32_t, OTF2_CommRef, std::uint32_t, std::uint64_t,
        std::uint64_t)
COUNTER(coll_end, "MpiCollectiveEnd", OTF2_CollectiveOp, OTF2_CommRef, std::uint32_t, std::uint64_t,
        std::uint64_t)
COUNTER(metric, "Metric", OTF2_MetricRef, std::uint8_t, const OTF2_Type*, const OTF2_MetricValue*)
COUNTER(sample, "CallingContextSample", OTF2_CallingContextRef, std::uint32_t,
        OTF2_InterruptGeneratorRef)
#undef COUNTER

OTF2_CallbackCode coll_begin(OTF2_LocationRef l, OTF2_TimeStamp, void* data, OTF2_AttributeList*) {
  count(data, l, "MpiCollectiveBegin");
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode unknown(OTF2_LocationRef l, OTF2_TimeStamp, void* data, OTF2_AttributeList*) {
  count(data, l, "other");
  return OTF2_CALLBACK_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: trace_counts ARCHIVE/traces.otf2\n");
    return 2;
  }
  OTF2_Reader* reader = OTF2_Reader_Open(argv[1]);
  if (reader == nullptr || OTF2_Reader_SetSerialCollectiveCallbacks(reader) != OTF2_SUCCESS) {
    std::fprintf(stderr, "trace_counts: cannot open %s as an OTF2 archive\n", argv[1]);
    return 1;
  }
  State state;
  OTF2_GlobalDefReader* defs = OTF2_Reader_GetGlobalDefReader(reader);
  OTF2_GlobalDefReaderCallbacks* dc = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(dc, def_string);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(dc, def_location);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(dc, def_region);
  OTF2_Reader_RegisterGlobalDefCallbacks(reader, defs, dc, &state);
  std::uint64_t n = 0;
  if (OTF2_Reader_ReadAllGlobalDefinitions(reader, defs, &n) != OTF2_SUCCESS) {
    std::fprintf(stderr, "trace_counts: cannot read the definitions of %s\n", argv[1]);
    return 1;
  }
  OTF2_GlobalDefReaderCallbacks_Delete(dc);

  for (auto& [id, loc] : state.locations) OTF2_Reader_SelectLocation(reader, id);
  OTF2_Reader_OpenDefFiles(reader);
  OTF2_Reader_OpenEvtFiles(reader);
  for (auto& [id, loc] : state.locations) {
    if (OTF2_DefReader* d = OTF2_Reader_GetDefReader(reader, id)) {
      std::uint64_t read = 0;
      OTF2_Reader_ReadAllLocalDefinitions(reader, d, &read);
      OTF2_Reader_CloseDefReader(reader, d);
    }
    OTF2_Reader_GetEvtReader(reader, id);
  }
  OTF2_Reader_CloseDefFiles(reader);

  OTF2_GlobalEvtReader* events = OTF2_Reader_GetGlobalEvtReader(reader);
  OTF2_GlobalEvtReaderCallbacks* ec = OTF2_GlobalEvtReaderCallbacks_New();
  OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(ec, enter);
  OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(ec, leave);
  OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(ec, mpi_send);
  OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(ec, mpi_recv);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(ec, mpi_isend);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback(ec, mpi_isend_complete);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback(ec, mpi_irecv_request);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(ec, mpi_irecv);
  OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback(ec, coll_begin);
  OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(ec, coll_end);
  OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(ec, metric);
  OTF2_GlobalEvtReaderCallbacks_SetCallingContextSampleCallback(ec, sample);
  OTF2_GlobalEvtReaderCallbacks_SetUnknownCallback(ec, unknown);
  OTF2_Reader_RegisterGlobalEvtCallbacks(reader, events, ec, &state);
  if (OTF2_Reader_ReadAllGlobalEvents(reader, events, &n) != OTF2_SUCCESS) {
    std::fprintf(stderr, "trace_counts: reading the events of %s failed\n", argv[1]);
    return 1;
  }
  OTF2_GlobalEvtReaderCallbacks_Delete(ec);
  OTF2_Reader_CloseGlobalEvtReader(reader, events);
  OTF2_Reader_CloseEvtFiles(reader);
  OTF2_Reader_Close(reader);

  std::printf("{\"locations\": [");
  const char* sep = "";
  for (const auto& [id, loc] : state.locations) {
    std::printf(
        "%s\n  {\"id\": %llu, \"rank\": %llu, \"defined\": %llu, \"read\": %llu, \"kinds\": {", sep,
        static_cast<unsigned long long>(id), static_cast<unsigned long long>(loc.group),
        static_cast<unsigned long long>(loc.defined), static_cast<unsigned long long>(loc.read));
    const char* ksep = "";
    for (const auto& [kind, k] : loc.kinds) {
      std::printf("%s\"%s\": %llu", ksep, kind.c_str(), static_cast<unsigned long long>(k));
      ksep = ", ";
    }
    std::printf("}}");
    sep = ",";
  }
  std::printf("\n]}\n");
  return 0;
}
