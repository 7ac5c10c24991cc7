#include "reader/call_kind.hpp"
#include "events/value_names.hpp"

#include <algorithm>
#include <initializer_list>
#include <string_view>

namespace perusetrace::archive {

namespace {

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

CallKind call_kind(const RegionDef& r) {
  if (r.kind == RegionKind::Tracer) return CallKind::Tracer;
  if (r.kind != RegionKind::MpiFunction) return CallKind::OutsideMpi;
  const std::string_view n = r.name;
  if (one_of(n, {"MPI_Recv", "MPI_Mrecv", "MPI_Probe", "MPI_Mprobe"})) return CallKind::WaitMessage;
  if (one_of(n, {"MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend"})) return CallKind::BlockingSend;
  if (one_of(n, {"MPI_Sendrecv", "MPI_Sendrecv_replace"})) return CallKind::SendRecv;
  if (one_of(n,
             {"MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend", "MPI_Start", "MPI_Startall"}))
    return CallKind::ImmediateSend;
  if (one_of(n, {"MPI_Irecv", "MPI_Imrecv"})) return CallKind::ImmediateRecv;
  if (n.rfind("MPI_Wait", 0) == 0) return CallKind::Wait;
  if (n.rfind("MPI_Test", 0) == 0 || one_of(n, {"MPI_Iprobe", "MPI_Improbe"}))
    return CallKind::TestProbe;
  switch (r.role) {
    case RegionRole::Barrier:
      return CallKind::Synchronization;
    case RegionRole::Collective:
      return CallKind::Collective;
    case RegionRole::FileIo:
      return CallKind::Io;
    default:
      return CallKind::OtherMpi;
  }
}

bool makes_progress(const RegionDef& r) {
  if (r.kind != RegionKind::MpiFunction) return false;
  const std::string_view n = r.name;
  for (const std::string_view local :
       {"MPI_Type_",  "MPI_Info_",     "MPI_Group_",    "MPI_Op_",     "MPI_Errhandler_",
        "MPI_T_",     "MPI_Cart_",     "MPI_Graph",     "MPI_Status_", "MPI_Keyval_",
        "MPI_Attr_",  "MPI_Comm_get_", "MPI_Comm_set_", "MPI_Get_",    "MPI_Wt",
        "MPI_Error_", "MPI_Aint_",     "MPI_Pack",      "MPI_Unpack",  "MPI_Comm_call_errhandler"})
    if (n.rfind(local, 0) == 0) return false;
  // ob1's nonblocking posting calls start or post a request without polling for incoming
  // fragments (no opal_progress): they move nothing already in flight.
  return !one_of(n, {"MPI_Comm_rank",
                     "MPI_Comm_size",
                     "MPI_Comm_remote_size",
                     "MPI_Comm_test_inter",
                     "MPI_Comm_compare",
                     "MPI_Initialized",
                     "MPI_Finalized",
                     "MPI_Query_thread",
                     "MPI_Is_thread_main",
                     "MPI_Pcontrol",
                     "MPI_Dims_create",
                     "MPI_Topo_test",
                     "MPI_Alloc_mem",
                     "MPI_Free_mem",
                     "MPI_Address",
                     "MPI_Request_free",
                     "MPI_Comm_free_keyval",
                     "MPI_Isend",
                     "MPI_Issend",
                     "MPI_Ibsend",
                     "MPI_Irsend",
                     "MPI_Irecv",
                     "MPI_Imrecv",
                     "MPI_Send_init",
                     "MPI_Ssend_init",
                     "MPI_Bsend_init",
                     "MPI_Rsend_init",
                     "MPI_Recv_init",
                     "MPI_Start",
                     "MPI_Startall"});
}

const char* call_kind_name(CallKind kind) {
  return name_in(kind,
                 {{CallKind::OutsideMpi, "outside MPI"},
                  {CallKind::WaitMessage, "waiting for a message"},
                  {CallKind::BlockingSend, "blocking send"},
                  {CallKind::SendRecv, "send-receive"},
                  {CallKind::ImmediateSend, "immediate send"},
                  {CallKind::ImmediateRecv, "immediate receive"},
                  {CallKind::Wait, "wait"},
                  {CallKind::TestProbe, "test/probe"},
                  {CallKind::Synchronization, "synchronization"},
                  {CallKind::Collective, "collective"},
                  {CallKind::Io, "I/O"},
                  {CallKind::OtherMpi, "other MPI"},
                  {CallKind::Tracer, "tracer writing its buffer"}},
                 "?");
}

}  // namespace perusetrace::archive
