#include "lib/mpit_variables.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "events/value_names.hpp"

namespace perusetrace::mpit {

namespace {

constexpr int kNameRoom = 256, kDescriptionRoom = 1024;

std::string trimmed(const char* text, int length) {
  std::string s(text, static_cast<std::size_t>(std::max(0, length)));
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace

namespace {
std::atomic<bool> g_initialised{false};
}

bool initialise() {
  static const bool ok = [] {
    int provided = 0;
    const bool started = PMPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS;
    g_initialised.store(started);
    return started;
  }();
  return ok;
}

void finalise() {
  if (g_initialised.exchange(false)) PMPI_T_finalize();
}

namespace {

// A variable's name and description, as MPI_T_*_get_info fills them in.
struct Texts {
  char name[kNameRoom], description[kDescriptionRoom];
  int name_len = kNameRoom, description_len = kDescriptionRoom;
};

// Every variable of one kind: `count` says how many indices there are, `read(i, texts, info)`
// fills one's own fields and says whether the index still names a variable (not so after
// MPI_T_ERR_INVALID_INDEX: it went away).
template <typename Info, typename Read>
std::vector<Info> variables(int (*count)(int*), Read read) {
  std::vector<Info> out;
  int n = 0;
  if (count(&n) != MPI_SUCCESS) return out;
  for (int i = 0; i < n; ++i) {
    Texts t;
    Info info;
    if (!read(i, t, info)) continue;
    info.index = i;
    info.name = trimmed(t.name, t.name_len);
    info.description = trimmed(t.description, t.description_len);
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace

std::vector<PvarInfo> pvars() {
  return variables<PvarInfo>(PMPI_T_pvar_get_num, [](int i, Texts& t, PvarInfo& v) {
    int verbosity = 0, readonly = 1, continuous = 1, atomic = 0;
    MPI_T_enum enumtype;
    if (PMPI_T_pvar_get_info(i, t.name, &t.name_len, &verbosity, &v.var_class, &v.datatype,
                             &enumtype, t.description, &t.description_len, &v.bind, &readonly,
                             &continuous, &atomic) != MPI_SUCCESS)
      return false;
    v.readonly = readonly != 0;
    v.continuous = continuous != 0;
    v.atomic = atomic != 0;
    return true;
  });
}

std::vector<CvarInfo> cvars() {
  return variables<CvarInfo>(PMPI_T_cvar_get_num, [](int i, Texts& t, CvarInfo& v) {
    int verbosity = 0;
    MPI_T_enum enumtype;
    return PMPI_T_cvar_get_info(i, t.name, &t.name_len, &verbosity, &v.datatype, &enumtype,
                                t.description, &t.description_len, &v.bind,
                                &v.scope) == MPI_SUCCESS;
  });
}

// The MPI_T constants are named after themselves, past their prefix.
#define PERUSETRACE_CLASS(name) \
  { MPI_T_PVAR_CLASS_##name, #name }
const char* class_name(int c) {
  return name_in(
      c,
      {PERUSETRACE_CLASS(STATE), PERUSETRACE_CLASS(LEVEL), PERUSETRACE_CLASS(SIZE),
       PERUSETRACE_CLASS(PERCENTAGE), PERUSETRACE_CLASS(HIGHWATERMARK),
       PERUSETRACE_CLASS(LOWWATERMARK), PERUSETRACE_CLASS(COUNTER), PERUSETRACE_CLASS(AGGREGATE),
       PERUSETRACE_CLASS(TIMER), PERUSETRACE_CLASS(GENERIC)},
      "?");
}
#undef PERUSETRACE_CLASS

#define PERUSETRACE_BIND(name) \
  { MPI_T_BIND_##name, #name }
const char* bind_name(int b) {
  return name_in(
      b,
      {PERUSETRACE_BIND(NO_OBJECT), PERUSETRACE_BIND(MPI_COMM), PERUSETRACE_BIND(MPI_DATATYPE),
       PERUSETRACE_BIND(MPI_ERRHANDLER), PERUSETRACE_BIND(MPI_FILE), PERUSETRACE_BIND(MPI_GROUP),
       PERUSETRACE_BIND(MPI_OP), PERUSETRACE_BIND(MPI_REQUEST), PERUSETRACE_BIND(MPI_WIN),
       PERUSETRACE_BIND(MPI_MESSAGE), PERUSETRACE_BIND(MPI_INFO)},
      "?");
}
#undef PERUSETRACE_BIND

#define PERUSETRACE_SCOPE(name) \
  { MPI_T_SCOPE_##name, #name }
const char* scope_name(int s) {
  return name_in(s,
                 {PERUSETRACE_SCOPE(CONSTANT), PERUSETRACE_SCOPE(READONLY),
                  PERUSETRACE_SCOPE(LOCAL), PERUSETRACE_SCOPE(GROUP), PERUSETRACE_SCOPE(GROUP_EQ),
                  PERUSETRACE_SCOPE(ALL), PERUSETRACE_SCOPE(ALL_EQ)},
                 "?");
}
#undef PERUSETRACE_SCOPE

// MPI datatypes are not constants in every MPI (Open MPI's are addresses): compare at run time.
const char* type_name(MPI_Datatype t) {
  if (t == MPI_INT) return "int";
  if (t == MPI_UNSIGNED) return "unsigned";
  if (t == MPI_UNSIGNED_LONG) return "unsigned long";
  if (t == MPI_UNSIGNED_LONG_LONG) return "unsigned long long";
  if (t == MPI_COUNT) return "MPI_Count";
  if (t == MPI_CHAR) return "char";
  if (t == MPI_DOUBLE) return "double";
  if (t == MPI_C_BOOL) return "bool";  // not in MPI_T's list, but Open MPI's booleans use it
  return "?";
}

std::size_t type_size(MPI_Datatype t) {
  if (t == MPI_INT) return sizeof(int);
  if (t == MPI_UNSIGNED) return sizeof(unsigned);
  if (t == MPI_UNSIGNED_LONG) return sizeof(unsigned long);
  if (t == MPI_UNSIGNED_LONG_LONG) return sizeof(unsigned long long);
  if (t == MPI_COUNT) return sizeof(MPI_Count);
  if (t == MPI_CHAR) return 1;
  if (t == MPI_DOUBLE) return sizeof(double);
  if (t == MPI_C_BOOL) return sizeof(bool);
  return 0;
}

std::int64_t element(const void* buffer, MPI_Datatype t, int i, double& real, bool& is_real) {
  is_real = false;
  // Unsigned 64-bit values are taken modulo 2^64: Open MPI's counters can go below zero (its
  // unexpected-queue count starts at -1), and differences of wrapped values stay right.
  auto wrap = [](unsigned long long v) { return static_cast<std::int64_t>(v); };
  if (t == MPI_INT) return static_cast<const int*>(buffer)[i];
  if (t == MPI_UNSIGNED) return static_cast<const unsigned*>(buffer)[i];
  if (t == MPI_UNSIGNED_LONG) return wrap(static_cast<const unsigned long*>(buffer)[i]);
  if (t == MPI_UNSIGNED_LONG_LONG) return wrap(static_cast<const unsigned long long*>(buffer)[i]);
  if (t == MPI_COUNT) return static_cast<std::int64_t>(static_cast<const MPI_Count*>(buffer)[i]);
  if (t == MPI_CHAR) return static_cast<const char*>(buffer)[i];
  if (t == MPI_C_BOOL) return static_cast<const bool*>(buffer)[i] ? 1 : 0;
  if (t == MPI_DOUBLE) {
    is_real = true;
    real = static_cast<const double*>(buffer)[i];
    return std::isfinite(real) ? static_cast<std::int64_t>(std::clamp(real, -9.2e18, 9.2e18)) : 0;
  }
  return 0;
}

std::string read_cvar(const CvarInfo& cvar, std::string& error) {
  if (cvar.bind != MPI_T_BIND_NO_OBJECT) {
    error = std::string("bound to ") + bind_name(cvar.bind);
    return "";
  }
  MPI_T_cvar_handle handle;
  int count = 0;
  int rc = PMPI_T_cvar_handle_alloc(cvar.index, nullptr, &handle, &count);
  if (rc != MPI_SUCCESS) {
    error = error_name(rc);
    return "";
  }
  const std::size_t size = type_size(cvar.datatype);
  std::string out;
  if (size == 0 || count < 0 || count > (1 << 20)) {
    error = "unknown datatype";
  } else {
    std::vector<char> buffer(size * static_cast<std::size_t>(std::max(count, 1)) + 1, '\0');
    rc = PMPI_T_cvar_read(handle, buffer.data());
    if (rc != MPI_SUCCESS) {
      error = error_name(rc);
    } else if (cvar.datatype == MPI_CHAR) {
      out = buffer.data();
    } else {
      for (int i = 0; i < count; ++i) {
        double real = 0;
        bool is_real = false;
        const std::int64_t v = element(buffer.data(), cvar.datatype, i, real, is_real);
        if (i) out += ',';
        if (is_real) {
          char text[32];
          std::snprintf(text, sizeof text, "%g", real);
          out += text;
        } else {
          out += std::to_string(v);
        }
      }
    }
  }
  PMPI_T_cvar_handle_free(&handle);
  return out;
}

bool write_cvar(const CvarInfo& cvar, const std::string& value, std::string& error) {
  if (cvar.bind != MPI_T_BIND_NO_OBJECT) {
    error = std::string("it is bound to ") + bind_name(cvar.bind) + ", not settable at init";
    return false;
  }
  MPI_T_cvar_handle handle;
  int count = 0;
  int rc = PMPI_T_cvar_handle_alloc(cvar.index, nullptr, &handle, &count);
  if (rc != MPI_SUCCESS) {
    error = "MPI refused a handle: " + error_name(rc);
    return false;
  }
  std::vector<char> buffer(std::max<std::size_t>(type_size(cvar.datatype), 8) +
                               (cvar.datatype == MPI_CHAR ? value.size() + 1 : 0),
                           '\0');
  bool parsed = count == 1 || cvar.datatype == MPI_CHAR;
  if (!parsed) error = "it holds " + std::to_string(count) + " values; only single values are set";
  if (parsed && cvar.datatype == MPI_CHAR) {
    std::memcpy(buffer.data(), value.c_str(), value.size() + 1);
  } else if (parsed && cvar.datatype == MPI_DOUBLE) {
    char* end = nullptr;
    errno = 0;
    const double d = std::strtod(value.c_str(), &end);
    parsed = !value.empty() && *end == '\0' && errno == 0;
    std::memcpy(buffer.data(), &d, sizeof d);
    if (!parsed) error = "'" + value + "' is not a number (the variable is a double)";
  } else if (parsed) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(value.c_str(), &end, 0);
    const bool is_signed = cvar.datatype == MPI_INT || cvar.datatype == MPI_COUNT;
    parsed = !value.empty() && *end == '\0' && errno == 0 && (is_signed || v >= 0);
    if (cvar.datatype == MPI_INT || cvar.datatype == MPI_UNSIGNED)
      parsed = parsed && v >= std::numeric_limits<int>::min() &&
               v <= static_cast<long long>(std::numeric_limits<unsigned>::max());
    if (!parsed)
      error = "'" + value + "' is not a value of its type (" + type_name(cvar.datatype) + ")";
    const std::size_t size = type_size(cvar.datatype);
    if (size == sizeof(int)) {
      const int narrow = static_cast<int>(v);
      std::memcpy(buffer.data(), &narrow, sizeof narrow);
    } else {
      std::memcpy(buffer.data(), &v, std::min(size, sizeof v));
    }
  }
  if (parsed) {
    rc = PMPI_T_cvar_write(handle, buffer.data());
    parsed = rc == MPI_SUCCESS;
    if (!parsed) error = "MPI refused it: " + error_name(rc);
  }
  PMPI_T_cvar_handle_free(&handle);
  return parsed;
}

#define PERUSETRACE_ERROR(name) \
  { MPI_T_ERR_##name, "MPI_T_ERR_" #name }
std::string error_name(int code) {
  const char* name =
      name_in(code,
              {PERUSETRACE_ERROR(MEMORY), PERUSETRACE_ERROR(NOT_INITIALIZED),
               PERUSETRACE_ERROR(CANNOT_INIT), PERUSETRACE_ERROR(INVALID_INDEX),
               PERUSETRACE_ERROR(INVALID_HANDLE), PERUSETRACE_ERROR(OUT_OF_HANDLES),
               PERUSETRACE_ERROR(OUT_OF_SESSIONS), PERUSETRACE_ERROR(INVALID_SESSION),
               PERUSETRACE_ERROR(CVAR_SET_NOT_NOW), PERUSETRACE_ERROR(CVAR_SET_NEVER),
               PERUSETRACE_ERROR(PVAR_NO_STARTSTOP), PERUSETRACE_ERROR(PVAR_NO_WRITE),
               PERUSETRACE_ERROR(PVAR_NO_ATOMIC)},
              nullptr);
  return name != nullptr ? name : "MPI error " + std::to_string(code);
}
#undef PERUSETRACE_ERROR

}  // namespace perusetrace::mpit
