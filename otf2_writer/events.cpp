// Records to OTF2 events, read back from the journal at MPI_Finalize or by `perusetrace recover`.
// How Peruse events are shown is explained in docs/otf2-mapping.md.
#include <algorithm>

#include "events/catalogue.hpp"
#include "otf2_writer/internal.hpp"

namespace perusetrace::trace::detail {

namespace {

static_assert(counter_of(PeruseEvent::REQ_INSERT_IN_POSTED_Q) ==
                  static_cast<int>(Metric::PostedQueueDepth) &&
              counter_of(PeruseEvent::MSG_INSERT_IN_UNEX_Q) ==
                  static_cast<int>(Metric::UnexpectedQueueDepth) &&
              counter_of(PeruseEvent::REQ_XFER_BEGIN) == static_cast<int>(Metric::BytesInFlight));

// One Peruse event, an Enter and a Leave of its region at one timestamp, carrying every field:
// OTF2 is the interchange format, and a reader that does not know a convention of ours must
// read each event whole (the journal keeps the compact encoding; docs/performance.md, "Trace
// size per event", gives what this costs).
OTF2_ErrorCode peruse_event(Location& loc, const ArchiveSpec& spec, std::uint64_t time,
                            std::uint8_t event, const PeruseFieldValues& v) {
  OTF2_AttributeList* a = loc.attributes;
  OTF2_AttributeList_AddUint64(a, kAttrRequest, v.request);
  OTF2_AttributeList_AddInt32(a, kAttrPeer, v.peer);
  OTF2_AttributeList_AddInt32(a, kAttrTag, v.tag);
  OTF2_AttributeList_AddUint64(a, kAttrBytes, v.bytes);
  OTF2_AttributeList_AddUint8(a, kAttrOperation, v.operation);
  OTF2_AttributeList_AddCommRef(a, kAttrComm, v.comm);
  const OTF2_RegionRef region = spec.peruse_region_base + event;
  OTF2_ErrorCode rc = OTF2_EvtWriter_Enter(loc.writer, a, time, region);
  if (rc == OTF2_SUCCESS) rc = OTF2_EvtWriter_Leave(loc.writer, nullptr, time, region);
  return rc;
}

// A Peruse record: the counters if its event changed one (before the event, at its time: the
// layout of Score-P's counters, which readers such as pipit expect), its event, then the events
// it carries.
OTF2_ErrorCode peruse(Location& loc, const ArchiveSpec& spec, const Record& r) {
  OTF2_ErrorCode rc = OTF2_SUCCESS;
  if (const int metric = counter_of(static_cast<PeruseEvent>(r.event)); metric >= 0) {
    loc.peruse_counters[metric] = static_cast<std::int64_t>(r.aux);
    constexpr int kCounters = static_cast<int>(Metric::Count);
    OTF2_Type types[kCounters];
    OTF2_MetricValue values[kCounters];
    for (int i = 0; i < kCounters; ++i) {
      types[i] = OTF2_TYPE_INT64;
      values[i].signed_int = loc.peruse_counters[i];
    }
    rc = OTF2_EvtWriter_Metric(loc.writer, nullptr, r.time, kPeruseCounterClass, kCounters, types,
                               values);
  }
  const PeruseFieldValues v{r.request, r.peer, r.tag, r.bytes, peruse_operation(r), r.comm};
  if (rc == OTF2_SUCCESS) rc = peruse_event(loc, spec, r.time, r.event, v);
  CarriedPeruse c;
  for (unsigned slot = 0; rc == OTF2_SUCCESS && carried_peruse(r, slot, c); ++slot) {
    PeruseFieldValues f = v;
    if (c.without_request) f.request = f.bytes = 0;
    rc = peruse_event(loc, spec, r.time, c.event, f);
  }
  return rc;
}

OTF2_ErrorCode one(Location& loc, const ArchiveSpec& spec, const Record& r);

// One-sided communication's values (record/record.hpp) as OTF2's. A damaged journal may
// hold anything: unknown values become the nearest harmless one.
std::uint32_t remote(std::int32_t peer) {
  return peer < 0 ? OTF2_UNDEFINED_UINT32 : static_cast<std::uint32_t>(peer);
}

OTF2_RmaSyncLevel sync_level(std::int32_t bits) {
  OTF2_RmaSyncLevel level = OTF2_RMA_SYNC_LEVEL_NONE;
  if (bits & kRmaSyncProcess) level |= OTF2_RMA_SYNC_LEVEL_PROCESS;
  if (bits & kRmaSyncMemory) level |= OTF2_RMA_SYNC_LEVEL_MEMORY;
  return level;
}

OTF2_CollectiveOp rma_collective(std::int32_t what) {
  switch (static_cast<RmaCollective>(what)) {
    case RmaCollective::Create:
      return OTF2_COLLECTIVE_OP_CREATE_HANDLE;
    case RmaCollective::CreateAllocate:
      return OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE;
    case RmaCollective::Destroy:
      return OTF2_COLLECTIVE_OP_DESTROY_HANDLE;
    case RmaCollective::DestroyDeallocate:
      return OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE;
    case RmaCollective::Fence:
      break;
  }
  return OTF2_COLLECTIVE_OP_BARRIER;  // MPI_Win_fence, as Score-P writes it
}

OTF2_LockType lock_type(std::int32_t lock) {
  return static_cast<RmaLock>(lock) == RmaLock::Exclusive ? OTF2_LOCK_EXCLUSIVE : OTF2_LOCK_SHARED;
}

OTF2_RmaAtomicType atomic_type(std::int32_t kind) {
  switch (static_cast<RmaAtomicKind>(kind)) {
    case RmaAtomicKind::FetchAndAccumulate:
      return OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE;
    case RmaAtomicKind::CompareAndSwap:
      return OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP;
    case RmaAtomicKind::Accumulate:
      break;
  }
  return OTF2_RMA_ATOMIC_TYPE_ACCUMULATE;
}

// The attribute list naming a record's datatypes (local ids, mapped to the run's datatype
// Strings by the location's STRING mapping table), or nullptr when it names none.
OTF2_AttributeList* datatype(Location& loc, std::uint64_t type) {
  if (type == kNoDatatype) return nullptr;
  OTF2_AttributeList_AddStringRef(loc.attributes, kAttrDatatype, static_cast<OTF2_StringRef>(type));
  return loc.attributes;
}

OTF2_AttributeList* datatypes(Location& loc, std::uint64_t pair) {
  const auto send = static_cast<std::uint32_t>(pair),
             receive = static_cast<std::uint32_t>(pair >> 32);
  if (send != kNoDatatype) OTF2_AttributeList_AddStringRef(loc.attributes, kAttrSendDatatype, send);
  if (receive != kNoDatatype)
    OTF2_AttributeList_AddStringRef(loc.attributes, kAttrRecvDatatype, receive);
  return pair != 0 ? loc.attributes : nullptr;
}

// The MPI event an Enter or Leave record carries, at the same timestamp.
OTF2_ErrorCode payload(Location& loc, const ArchiveSpec& spec, const Record& r) {
  return r.event == 0 ? OTF2_SUCCESS : one(loc, spec, carried(r));
}

OTF2_ErrorCode one(Location& loc, const ArchiveSpec& spec, const Record& r) {
  OTF2_EvtWriter* w = loc.writer;
  switch (r.kind) {
    case RecordKind::Enter: {
      const OTF2_ErrorCode rc = OTF2_EvtWriter_Enter(w, nullptr, r.time, r.region);
      return rc == OTF2_SUCCESS ? payload(loc, spec, r) : rc;
    }
    case RecordKind::Leave: {
      // MPI_File_set_size and MPI_File_preallocate: OTF2 has no event for them, so their
      // Leave carries the handle and the size.
      if (r.event == static_cast<std::uint8_t>(RecordKind::IoSetSize)) {
        OTF2_AttributeList* a = loc.attributes;
        OTF2_AttributeList_AddIoHandleRef(a, kAttrIoHandle, r.comm);
        OTF2_AttributeList_AddUint64(a, kAttrIoSize, r.bytes);
        return OTF2_EvtWriter_Leave(w, a, r.time, r.region);
      }
      const OTF2_ErrorCode rc = payload(loc, spec, r);
      if (rc != OTF2_SUCCESS) return rc;
      OTF2_AttributeList* a = nullptr;
      if (loc.fold.kind == RecordKind::PollFold && loc.fold.region == r.region) {
        a = loc.attributes;
        OTF2_AttributeList_AddUint64(a, kAttrPollCalls, loc.fold.bytes);
        OTF2_AttributeList_AddUint64(a, kAttrPollInsideNs, loc.fold.aux);
      }
      loc.fold.kind = RecordKind::Enter;
      return OTF2_EvtWriter_Leave(w, a, r.time, r.region);
    }
    case RecordKind::PollFold:
      loc.fold = r;  // the Leave's attributes (above), which comes next
      return OTF2_SUCCESS;
    case RecordKind::Peruse:
      return peruse(loc, spec, r);
    case RecordKind::MpiSend:
      return OTF2_EvtWriter_MpiSend(w, datatype(loc, r.aux), r.time,
                                    static_cast<std::uint32_t>(r.peer), r.comm,
                                    static_cast<std::uint32_t>(r.tag), r.bytes);
    case RecordKind::MpiRecv:
      return OTF2_EvtWriter_MpiRecv(w, datatype(loc, r.aux), r.time,
                                    static_cast<std::uint32_t>(r.peer), r.comm,
                                    static_cast<std::uint32_t>(r.tag), r.bytes);
    case RecordKind::MpiIsend:
      return OTF2_EvtWriter_MpiIsend(w, datatype(loc, r.aux), r.time,
                                     static_cast<std::uint32_t>(r.peer), r.comm,
                                     static_cast<std::uint32_t>(r.tag), r.bytes, r.request);
    case RecordKind::MpiIsendComplete:
      return OTF2_EvtWriter_MpiIsendComplete(w, nullptr, r.time, r.request);
    case RecordKind::MpiIrecvRequest:
      return OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, r.time, r.request);
    case RecordKind::MpiIrecv:
      return OTF2_EvtWriter_MpiIrecv(w, datatype(loc, r.aux), r.time,
                                     static_cast<std::uint32_t>(r.peer), r.comm,
                                     static_cast<std::uint32_t>(r.tag), r.bytes, r.request);
    case RecordKind::MpiRequestCancelled:
      return OTF2_EvtWriter_MpiRequestCancelled(w, nullptr, r.time, r.request);
    case RecordKind::CollectiveBegin:
      return OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, r.time);
    case RecordKind::CollectiveEnd: {
      const auto op =
          r.region < spec.regions.size() ? spec.regions[r.region].collective : CollectiveOp::None;
      return OTF2_EvtWriter_MpiCollectiveEnd(
          w, datatypes(loc, r.request), r.time, static_cast<OTF2_CollectiveOp>(op), r.comm,
          r.peer < 0 ? OTF2_UNDEFINED_UINT32 : static_cast<std::uint32_t>(r.peer), r.bytes, r.aux);
    }
    case RecordKind::IoCreateHandle: {
      static constexpr OTF2_IoAccessMode kAccess[] = {OTF2_IO_ACCESS_MODE_READ_ONLY,
                                                      OTF2_IO_ACCESS_MODE_WRITE_ONLY,
                                                      OTF2_IO_ACCESS_MODE_READ_WRITE};
      OTF2_IoCreationFlag creation = OTF2_IO_CREATION_FLAG_NONE;
      if (r.tag & kIoCreate) creation |= OTF2_IO_CREATION_FLAG_CREATE;
      if (r.tag & kIoExclusive) creation |= OTF2_IO_CREATION_FLAG_EXCLUSIVE;
      OTF2_IoStatusFlag status = OTF2_IO_STATUS_FLAG_NONE;
      if (r.aux & kIoAppend) status |= OTF2_IO_STATUS_FLAG_APPEND;
      if (r.aux & kIoDeleteOnClose) status |= OTF2_IO_STATUS_FLAG_DELETE_ON_CLOSE;
      OTF2_AttributeList* a = nullptr;
      if (r.bytes != kIoUnknownBytes) {
        a = loc.attributes;
        OTF2_AttributeList_AddUint64(a, kAttrIoSizeAtOpen, r.bytes);
      }
      note_handle_open(r.comm, r.time, r.bytes);
      return OTF2_EvtWriter_IoCreateHandle(
          w, a, r.time, r.comm, kAccess[r.peer >= 0 && r.peer < 3 ? r.peer : 0], creation, status);
    }
    case RecordKind::IoDestroyHandle:
      return OTF2_EvtWriter_IoDestroyHandle(w, nullptr, r.time, r.comm);
    case RecordKind::IoOperationBegin: {
      OTF2_IoOperationFlag flags = OTF2_IO_OPERATION_FLAG_NONE;
      if (r.tag & kIoNonBlocking) flags |= OTF2_IO_OPERATION_FLAG_NON_BLOCKING;
      if (r.tag & kIoCollective) flags |= OTF2_IO_OPERATION_FLAG_COLLECTIVE;
      const OTF2_IoOperationMode mode =
          r.peer == static_cast<std::int32_t>(IoOperation::Write)   ? OTF2_IO_OPERATION_MODE_WRITE
          : r.peer == static_cast<std::int32_t>(IoOperation::Flush) ? OTF2_IO_OPERATION_MODE_FLUSH
                                                                    : OTF2_IO_OPERATION_MODE_READ;
      OTF2_ErrorCode rc = OTF2_EvtWriter_IoOperationBegin(w, datatype(loc, r.aux), r.time, r.comm,
                                                          mode, flags, r.bytes, r.request);
      // OTF2 wants a nonblocking operation marked as issued before it completes.
      if (rc == OTF2_SUCCESS && (r.tag & kIoNonBlocking))
        rc = OTF2_EvtWriter_IoOperationIssued(w, nullptr, r.time, r.comm, r.request);
      return rc;
    }
    case RecordKind::IoOperationComplete:
      return OTF2_EvtWriter_IoOperationComplete(w, nullptr, r.time, r.comm, r.bytes, r.request);
    case RecordKind::IoDeleteFile:
      return OTF2_EvtWriter_IoDeleteFile(w, nullptr, r.time, kIoParadigm, r.comm);
    case RecordKind::IoSeek: {
      static constexpr OTF2_IoSeekOption kFrom[] = {
          OTF2_IO_SEEK_FROM_START, OTF2_IO_SEEK_FROM_CURRENT, OTF2_IO_SEEK_FROM_END};
      return OTF2_EvtWriter_IoSeek(w, nullptr, r.time, r.comm, static_cast<std::int64_t>(r.bytes),
                                   kFrom[r.peer >= 0 && r.peer < 3 ? r.peer : 0], r.aux);
    }
    case RecordKind::IoSetSize:
      return OTF2_SUCCESS;  // only as a Leave's attributes (above)
    case RecordKind::Sample: {
      OTF2_AttributeList* a = loc.attributes;
      OTF2_AttributeList_AddUint8(a, kAttrMpiState, r.event);
      OTF2_AttributeList_AddUint8(a, kAttrMpiActivity, static_cast<std::uint8_t>(r.tag));
      if (r.region != kNoRegion) OTF2_AttributeList_AddRegionRef(a, kAttrMpiFunction, r.region);
      if (r.aux > 1)
        OTF2_AttributeList_AddUint32(a, kAttrSampleWeight, static_cast<std::uint32_t>(r.aux));
      return OTF2_EvtWriter_CallingContextSample(w, a, r.time, r.comm,
                                                 static_cast<std::uint32_t>(r.bytes), 0);
    }
    case RecordKind::NbCollectiveRequest:
      return OTF2_EvtWriter_NonBlockingCollectiveRequest(w, datatypes(loc, r.aux), r.time,
                                                         r.request);
    case RecordKind::NbCollectiveComplete: {
      const auto fn = static_cast<std::size_t>(r.tag);
      const auto op = fn < spec.regions.size() ? spec.regions[fn].collective : CollectiveOp::None;
      return OTF2_EvtWriter_NonBlockingCollectiveComplete(
          w, nullptr, r.time, static_cast<OTF2_CollectiveOp>(op), r.comm,
          r.peer < 0 ? OTF2_UNDEFINED_UINT32 : static_cast<std::uint32_t>(r.peer), r.bytes, r.aux,
          r.request);
    }
    case RecordKind::AnnotationBegin: {
      loc.annotations.push_back(r.comm);
      return OTF2_EvtWriter_Enter(w, nullptr, r.time, annotation_region(spec, r.comm));
    }
    case RecordKind::AnnotationEnd: {
      // The runtime keeps them nested; a damaged journal may not: an end that is not the
      // innermost open annotation's is dropped (close_location ends what stays open).
      if (loc.annotations.empty() || loc.annotations.back() != r.comm) return OTF2_SUCCESS;
      loc.annotations.pop_back();
      return OTF2_EvtWriter_Leave(w, nullptr, r.time, annotation_region(spec, r.comm));
    }
    case RecordKind::AnnotationSet: {
      const OTF2_Type type = OTF2_TYPE_INT64;
      OTF2_MetricValue value;
      value.unsigned_int = r.bytes;
      return OTF2_EvtWriter_Metric(w, nullptr, r.time, r.comm, 1, &type, &value);
    }
    case RecordKind::RmaWinCreate:
      return OTF2_EvtWriter_RmaWinCreate(w, nullptr, r.time, r.comm);
    case RecordKind::RmaWinDestroy:
      return OTF2_EvtWriter_RmaWinDestroy(w, nullptr, r.time, r.comm);
    case RecordKind::RmaCollectiveBegin:
      return OTF2_EvtWriter_RmaCollectiveBegin(w, nullptr, r.time);
    case RecordKind::RmaCollectiveEnd:
      return OTF2_EvtWriter_RmaCollectiveEnd(w, nullptr, r.time, rma_collective(r.tag),
                                             sync_level(r.peer), r.comm, OTF2_UNDEFINED_UINT32, 0,
                                             0);
    case RecordKind::RmaGroupSync:
      return OTF2_EvtWriter_RmaGroupSync(w, nullptr, r.time, sync_level(r.peer), r.comm,
                                         static_cast<OTF2_GroupRef>(r.tag));
    case RecordKind::RmaRequestLock:
      return OTF2_EvtWriter_RmaRequestLock(w, nullptr, r.time, r.comm, remote(r.peer), 0,
                                           lock_type(r.tag));
    case RecordKind::RmaAcquireLock:
      return OTF2_EvtWriter_RmaAcquireLock(w, nullptr, r.time, r.comm, remote(r.peer), 0,
                                           lock_type(r.tag));
    case RecordKind::RmaReleaseLock:
      return OTF2_EvtWriter_RmaReleaseLock(w, nullptr, r.time, r.comm, remote(r.peer), 0);
    case RecordKind::RmaSync:
      return OTF2_EvtWriter_RmaSync(w, nullptr, r.time, r.comm, remote(r.peer),
                                    OTF2_RMA_SYNC_TYPE_MEMORY);
    case RecordKind::RmaPut:
      return OTF2_EvtWriter_RmaPut(w, nullptr, r.time, r.comm, remote(r.peer), r.bytes, r.request);
    case RecordKind::RmaGet:
      return OTF2_EvtWriter_RmaGet(w, nullptr, r.time, r.comm, remote(r.peer), r.bytes, r.request);
    case RecordKind::RmaAtomic:
      return OTF2_EvtWriter_RmaAtomic(w, nullptr, r.time, r.comm, remote(r.peer),
                                      atomic_type(r.tag), r.bytes, r.aux, r.request);
    case RecordKind::RmaOpCompleteNonBlocking:
      return OTF2_EvtWriter_RmaOpCompleteNonBlocking(w, nullptr, r.time, r.comm, r.request);
    case RecordKind::RmaOpCompleteRemote:
      return OTF2_EvtWriter_RmaOpCompleteRemote(w, nullptr, r.time, r.comm, r.request);
    case RecordKind::RmaOpTest:
      return OTF2_EvtWriter_RmaOpTest(w, nullptr, r.time, r.comm, r.request);
    case RecordKind::PvarValue: {
      const OTF2_Type type = r.tag == 1 ? OTF2_TYPE_DOUBLE : OTF2_TYPE_INT64;
      OTF2_MetricValue value;
      value.unsigned_int = r.bytes;  // the bits of an int64 or a double, as recorded
      return OTF2_EvtWriter_Metric(w, nullptr, r.time, r.comm, 1, &type, &value);
    }
  }
  return OTF2_SUCCESS;
}

}  // namespace

void note_handle_open(std::uint32_t handle, std::uint64_t time, std::uint64_t size) {
  constexpr std::uint32_t kMostHandles = 1u << 24;  // a damaged journal's id is not a size
  std::vector<HandleOpen>& opens = state().handle_opens;
  if (handle >= kMostHandles) return;
  if (opens.size() <= handle) opens.resize(handle + 1);
  opens[handle] = {true, time, size};
}

void encode(Location& loc, const Record* records, std::size_t count) {
  const ArchiveSpec& spec = state().spec;
  for (std::size_t i = 0; i < count; ++i) {
    loc.last_time = std::max(loc.last_time, records[i].time);
    const OTF2_ErrorCode rc = one(loc, spec, records[i]);
    if (rc != OTF2_SUCCESS) {
      fail(std::string("writing the trace failed: ") + OTF2_Error_GetDescription(rc) +
           ". Tracing stops here and the program goes on. " + write_remedy(spec.directory));
      return;
    }
  }
}

OTF2_ErrorCode end_annotations(Location& loc) {
  const ArchiveSpec& spec = state().spec;
  OTF2_ErrorCode rc = OTF2_SUCCESS;
  while (rc == OTF2_SUCCESS && !loc.annotations.empty()) {
    rc = OTF2_EvtWriter_Leave(loc.writer, nullptr, loc.last_time,
                              annotation_region(spec, loc.annotations.back()));
    loc.annotations.pop_back();
  }
  return rc;
}

}  // namespace perusetrace::trace::detail
