// What an MPI offers through its tool interface (MPI_T, MPI-3.1 chapter 14): the performance
// variables (PVARs) and control variables (CVARs) with their properties, read once off the hot
// path. Used by the runtime (lib/mpit_session.hpp) and by `perusetrace mpit`, which lists them.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace perusetrace::mpit {

struct PvarInfo {
  int index = 0;
  std::string name, description;
  int var_class = 0;  // MPI_T_PVAR_CLASS_*
  int bind = 0;       // MPI_T_BIND_*
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  bool readonly = true, continuous = true, atomic = false;
};

struct CvarInfo {
  int index = 0;
  std::string name, description;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  int bind = 0;   // MPI_T_BIND_*
  int scope = 0;  // MPI_T_SCOPE_*
};

// MPI_T_init_thread once per process (MPI_T counts its initialisations); false when the MPI has
// no working tool interface. Safe before MPI_Init.
bool initialise();

// MPI_T_finalize for initialise()'s MPI_T_init_thread, once, before MPI_Finalize. Open MPI 5
// keeps its transports open past MPI_Finalize while a tool session lives: a process that exits so
// closes its TCP connections abruptly, and a spawned job still running treats that as a failed
// peer ("Socket closed") and aborts.
void finalise();

// Every variable the MPI lists now. The number of PVARs may grow after MPI_Init (components
// register theirs when they open): call again where that matters.
std::vector<PvarInfo> pvars();
std::vector<CvarInfo> cvars();

const char* class_name(int var_class);  // "COUNTER", "HIGHWATERMARK", ...
const char* bind_name(int bind);        // "NO_OBJECT", "MPI_COMM", ...
const char* scope_name(int scope);      // "CONSTANT", "READONLY", "LOCAL", ...
const char* type_name(MPI_Datatype);    // "int", "unsigned long long", "double", ...
// The bytes one element of `datatype` takes (0 for a type MPI_T does not allow).
std::size_t type_size(MPI_Datatype datatype);
// Element `i` of a buffer of `datatype` values: as an integer (clamped to int64) or, for double,
// its value in `real` with `is_real` set.
std::int64_t element(const void* buffer, MPI_Datatype datatype, int i, double& real, bool& is_real);

// The value of a NO_OBJECT CVAR as text ("" with `error` set when it cannot be read).
std::string read_cvar(const CvarInfo& cvar, std::string& error);
// Sets a CVAR from text; false with `error` naming MPI's refusal (e.g. MPI_T_ERR_CVAR_SET_NOT_NOW)
// or the bad value.
bool write_cvar(const CvarInfo& cvar, const std::string& value, std::string& error);

// MPI_T's error codes by name, for messages users can look up.
std::string error_name(int code);

}  // namespace perusetrace::mpit
