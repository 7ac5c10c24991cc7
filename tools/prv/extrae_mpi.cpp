// The table follows Extrae's Paraver merger (bsc-performance-tools/extrae,
// src/merger/paraver/MPI_EventEncoding.h for the values, mpi_prv_events.c for each function's
// type): values 1-172. Values 173-194 (neighbourhood collectives, MPI-3 one-sided, matched
// probes, MPI_Init_thread) are those the Paraver-to-Dimemas translator lists as Extrae's ids;
// Extrae's own merger sources of those were not available to check against.
#include "tools/prv/extrae_mpi.hpp"

#include <algorithm>
#include <iterator>

namespace perusetrace::prv {

namespace {

struct Row {
  std::string_view name;
  ExtraeMpiGroup group;
  std::uint32_t value;
};

// Sorted by name, for the binary search.
constexpr Row kRows[] = {
    {"MPI_Abort", kOther, 100},
    {"MPI_Accumulate", kOneSided, 67},
    {"MPI_Address", kOther, 111},
    {"MPI_Allgather", kCollective, 17},
    {"MPI_Allgatherv", kCollective, 18},
    {"MPI_Allreduce", kCollective, 10},
    {"MPI_Alltoall", kCollective, 11},
    {"MPI_Alltoallv", kCollective, 12},
    {"MPI_Alltoallw", kCollective, 170},
    {"MPI_Attr_delete", kOther, 81},
    {"MPI_Attr_get", kOther, 82},
    {"MPI_Attr_put", kOther, 83},
    {"MPI_Barrier", kCollective, 8},
    {"MPI_Bcast", kCollective, 7},
    {"MPI_Bsend", kPointToPoint, 33},
    {"MPI_Bsend_init", kPointToPoint, 112},
    {"MPI_Buffer_attach", kOther, 113},
    {"MPI_Buffer_detach", kOther, 114},
    {"MPI_Cancel", kPointToPoint, 40},
    {"MPI_Cart_coords", kOther, 45},
    {"MPI_Cart_create", kOther, 43},
    {"MPI_Cart_get", kOther, 46},
    {"MPI_Cart_map", kOther, 47},
    {"MPI_Cart_rank", kOther, 48},
    {"MPI_Cart_shift", kOther, 44},
    {"MPI_Cart_sub", kOther, 49},
    {"MPI_Cartdim_get", kOther, 50},
    {"MPI_Comm_compare", kOther, 29},
    {"MPI_Comm_create", kOther, 21},
    {"MPI_Comm_dup", kOther, 22},
    {"MPI_Comm_free", kOther, 25},
    {"MPI_Comm_group", kOther, 24},
    {"MPI_Comm_rank", kOther, 19},
    {"MPI_Comm_remote_group", kOther, 26},
    {"MPI_Comm_remote_size", kOther, 27},
    {"MPI_Comm_size", kOther, 20},
    {"MPI_Comm_spawn", kOther, 151},
    {"MPI_Comm_spawn_multiple", kOther, 152},
    {"MPI_Comm_split", kOther, 23},
    {"MPI_Comm_test_inter", kOther, 28},
    {"MPI_Compare_and_swap", kOneSided, 185},
    {"MPI_Dims_create", kOther, 51},
    {"MPI_Dist_graph_create", kOther, 173},
    {"MPI_Errhandler_create", kOther, 102},
    {"MPI_Errhandler_free", kOther, 103},
    {"MPI_Errhandler_get", kOther, 104},
    {"MPI_Errhandler_set", kOther, 106},
    {"MPI_Error_class", kOther, 101},
    {"MPI_Error_string", kOther, 105},
    {"MPI_Fetch_and_op", kOneSided, 184},
    {"MPI_File_close", kIo, 142},
    {"MPI_File_open", kIo, 141},
    {"MPI_File_read", kIo, 143},
    {"MPI_File_read_all", kIo, 144},
    {"MPI_File_read_at", kIo, 147},
    {"MPI_File_read_at_all", kIo, 148},
    {"MPI_File_write", kIo, 145},
    {"MPI_File_write_all", kIo, 146},
    {"MPI_File_write_at", kIo, 149},
    {"MPI_File_write_at_all", kIo, 150},
    {"MPI_Finalize", kOther, 32},
    {"MPI_Gather", kCollective, 13},
    {"MPI_Gatherv", kCollective, 14},
    {"MPI_Get", kOneSided, 66},
    {"MPI_Get_accumulate", kOneSided, 172},
    {"MPI_Get_count", kOther, 118},
    {"MPI_Get_elements", kOther, 119},
    {"MPI_Get_processor_name", kOther, 107},
    {"MPI_Graph_create", kOther, 54},
    {"MPI_Graph_get", kOther, 52},
    {"MPI_Graph_map", kOther, 53},
    {"MPI_Graph_neighbors", kOther, 55},
    {"MPI_Graph_neighbors_count", kOther, 57},
    {"MPI_Graphdims_get", kOther, 56},
    {"MPI_Group_compare", kOther, 95},
    {"MPI_Group_difference", kOther, 84},
    {"MPI_Group_excl", kOther, 85},
    {"MPI_Group_free", kOther, 86},
    {"MPI_Group_incl", kOther, 87},
    {"MPI_Group_intersection", kOther, 88},
    {"MPI_Group_range_excl", kOther, 90},
    {"MPI_Group_range_incl", kOther, 91},
    {"MPI_Group_rank", kOther, 89},
    {"MPI_Group_size", kOther, 92},
    {"MPI_Group_translate_ranks", kOther, 93},
    {"MPI_Group_union", kOther, 94},
    {"MPI_Iallgather", kCollective, 160},
    {"MPI_Iallgatherv", kCollective, 161},
    {"MPI_Iallreduce", kCollective, 155},
    {"MPI_Ialltoall", kCollective, 158},
    {"MPI_Ialltoallv", kCollective, 159},
    {"MPI_Ialltoallw", kCollective, 171},
    {"MPI_Ibarrier", kCollective, 156},
    {"MPI_Ibcast", kCollective, 157},
    {"MPI_Ibsend", kPointToPoint, 36},
    {"MPI_Igather", kCollective, 162},
    {"MPI_Igatherv", kCollective, 163},
    {"MPI_Improbe", kPointToPoint, 191},
    {"MPI_Imrecv", kPointToPoint, 193},
    {"MPI_Ineighbor_allgather", kCollective, 175},
    {"MPI_Ineighbor_allgatherv", kCollective, 177},
    {"MPI_Ineighbor_alltoall", kCollective, 179},
    {"MPI_Ineighbor_alltoallv", kCollective, 181},
    {"MPI_Ineighbor_alltoallw", kCollective, 183},
    {"MPI_Init", kOther, 31},
    {"MPI_Init_thread", kOther, 194},
    {"MPI_Initialized", kOther, 108},
    {"MPI_Intercomm_create", kOther, 96},
    {"MPI_Intercomm_merge", kOther, 97},
    {"MPI_Iprobe", kPointToPoint, 62},
    {"MPI_Irecv", kPointToPoint, 4},
    {"MPI_Ireduce", kCollective, 154},
    {"MPI_Ireduce_scatter", kCollective, 166},
    {"MPI_Ireduce_scatter_block", kCollective, 169},
    {"MPI_Irsend", kPointToPoint, 38},
    {"MPI_Iscan", kCollective, 167},
    {"MPI_Iscatter", kCollective, 164},
    {"MPI_Iscatterv", kCollective, 165},
    {"MPI_Isend", kPointToPoint, 3},
    {"MPI_Issend", kPointToPoint, 37},
    {"MPI_Keyval_create", kOther, 99},
    {"MPI_Keyval_free", kOther, 98},
    {"MPI_Mprobe", kPointToPoint, 190},
    {"MPI_Mrecv", kPointToPoint, 192},
    {"MPI_Neighbor_allgather", kCollective, 174},
    {"MPI_Neighbor_allgatherv", kCollective, 176},
    {"MPI_Neighbor_alltoall", kCollective, 178},
    {"MPI_Neighbor_alltoallv", kCollective, 180},
    {"MPI_Neighbor_alltoallw", kCollective, 182},
    {"MPI_Op_create", kOther, 78},
    {"MPI_Op_free", kOther, 79},
    {"MPI_Pack", kOther, 76},
    {"MPI_Pack_size", kOther, 120},
    {"MPI_Probe", kPointToPoint, 61},
    {"MPI_Put", kOneSided, 65},
    {"MPI_Recv", kPointToPoint, 2},
    {"MPI_Recv_init", kPointToPoint, 116},
    {"MPI_Reduce", kCollective, 9},
    {"MPI_Reduce_scatter", kCollective, 80},
    {"MPI_Reduce_scatter_block", kCollective, 168},
    {"MPI_Request_free", kOther, 115},
    {"MPI_Request_get_status", kOther, 153},
    {"MPI_Rsend", kPointToPoint, 35},
    {"MPI_Rsend_init", kPointToPoint, 121},
    {"MPI_Scan", kCollective, 30},
    {"MPI_Scatter", kCollective, 15},
    {"MPI_Scatterv", kCollective, 16},
    {"MPI_Send", kPointToPoint, 1},
    {"MPI_Send_init", kPointToPoint, 117},
    {"MPI_Sendrecv", kPointToPoint, 41},
    {"MPI_Sendrecv_replace", kPointToPoint, 42},
    {"MPI_Ssend", kPointToPoint, 34},
    {"MPI_Ssend_init", kPointToPoint, 122},
    {"MPI_Start", kOther, 123},
    {"MPI_Startall", kOther, 124},
    {"MPI_Test", kOther, 39},
    {"MPI_Test_cancelled", kOther, 127},
    {"MPI_Testall", kOther, 125},
    {"MPI_Testany", kOther, 126},
    {"MPI_Testsome", kOther, 128},
    {"MPI_Topo_test", kOther, 58},
    {"MPI_Type_commit", kOther, 129},
    {"MPI_Type_contiguous", kOther, 130},
    {"MPI_Type_extent", kOther, 131},
    {"MPI_Type_free", kOther, 132},
    {"MPI_Type_hindexed", kOther, 133},
    {"MPI_Type_hvector", kOther, 134},
    {"MPI_Type_indexed", kOther, 135},
    {"MPI_Type_lb", kOther, 136},
    {"MPI_Type_size", kOther, 137},
    {"MPI_Type_struct", kOther, 138},
    {"MPI_Type_ub", kOther, 139},
    {"MPI_Type_vector", kOther, 140},
    {"MPI_Unpack", kOther, 77},
    {"MPI_Wait", kPointToPoint, 5},
    {"MPI_Waitall", kPointToPoint, 6},
    {"MPI_Waitany", kPointToPoint, 59},
    {"MPI_Waitsome", kPointToPoint, 60},
    {"MPI_Win_complete", kOneSided, 70},
    {"MPI_Win_create", kOneSided, 63},
    {"MPI_Win_fence", kOneSided, 68},
    {"MPI_Win_flush", kOneSided, 186},
    {"MPI_Win_flush_all", kOneSided, 187},
    {"MPI_Win_flush_local", kOneSided, 188},
    {"MPI_Win_flush_local_all", kOneSided, 189},
    {"MPI_Win_free", kOneSided, 64},
    {"MPI_Win_lock", kOneSided, 74},
    {"MPI_Win_post", kOneSided, 71},
    {"MPI_Win_start", kOneSided, 69},
    {"MPI_Win_test", kOneSided, 73},
    {"MPI_Win_unlock", kOneSided, 75},
    {"MPI_Win_wait", kOneSided, 72},
    {"MPI_Wtick", kOther, 109},
    {"MPI_Wtime", kOther, 110},
};

constexpr bool sorted() {
  for (std::size_t i = 1; i < std::size(kRows); ++i)
    if (!(kRows[i - 1].name < kRows[i].name)) return false;
  return true;
}
static_assert(sorted(), "kRows must stay sorted by name");

}  // namespace

const char* extrae_group_label(ExtraeMpiGroup group) {
  switch (group) {
    case kPointToPoint:
      return "MPI Point-to-point";
    case kCollective:
      return "MPI Collective Comm";
    case kOther:
      return "MPI Other";
    case kOneSided:
      return "MPI One-sided";
    case kIo:
      return "MPI I/O";
  }
  return "MPI";
}

std::optional<ExtraeMpiCall> extrae_mpi_call(std::string_view name) {
  const auto it = std::lower_bound(std::begin(kRows), std::end(kRows), name,
                                   [](const Row& r, std::string_view n) { return r.name < n; });
  if (it == std::end(kRows) || it->name != name) return std::nullopt;
  return ExtraeMpiCall{it->group, it->value};
}

std::optional<ExtraeMpiCall> extrae_mpi_call(const RegionDef& region) {
  if (region.kind != RegionKind::MpiFunction) return std::nullopt;
  return extrae_mpi_call(region.name);
}

}  // namespace perusetrace::prv
