#include "lib/peruse_session.hpp"

#include "lib/mpi_state.hpp"

// peruse.h declares C functions without an extern "C" guard of its own.
extern "C" {
#include <peruse.h>
}

#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "events/back_to_back.hpp"
#include "lib/comm_registry.hpp"
#include "lib/request_table.hpp"
#include "lib/selected_pml.hpp"
#include "lib/thread_buffer.hpp"
#include "record/carried_followers.hpp"

// Weak: the library also loads under an MPI whose libmpi has no Peruse (same ABI, built
// without --enable-peruse); PERUSE_Init is then null and tracing is PMPI-only.
#pragma weak PERUSE_Init
#pragma weak PERUSE_Query_event
#pragma weak PERUSE_Event_comm_register
#pragma weak PERUSE_Event_activate
#pragma weak PERUSE_Event_deactivate
#pragma weak PERUSE_Event_release

namespace perusetrace::peruse {

namespace {

using Handles = std::array<peruse_event_h, kPeruseEventCount>;

EventSet g_selected;
std::array<int, kPeruseEventCount> g_mpi_id{};  // catalogue index -> the MPI's event number
bool g_active = false;
bool g_paused = false;  // MPI_Pcontrol(0): registered, not active
std::mutex g_mutex;     // registration happens when communicators come and go, never per event
std::unordered_map<std::uintptr_t, Handles> g_handles;
TimeSources g_time_sources{};  // set at start, read by the callbacks

// Process-wide derived counters (catalogue.hpp's counter_change); the new value travels in the
// record's aux field.
std::array<std::atomic<std::int64_t>, static_cast<std::size_t>(Metric::Count)> g_counters{};

// initial-exec: the default model for a shared library calls __tls_get_addr at every access.
thread_local MPI_Datatype t_last_type __attribute__((tls_model("initial-exec"))) =
    MPI_DATATYPE_NULL;
constinit thread_local int t_last_size __attribute__((tls_model("initial-exec"))) = 0;

[[gnu::always_inline]] inline std::uint64_t bytes_of(const peruse_comm_spec_t* spec) noexcept {
  if (spec->count <= 0 || spec->datatype == MPI_DATATYPE_NULL) return 0;
  if (spec->datatype != t_last_type) {
    PMPI_Type_size(spec->datatype, &t_last_size);
    if (t_last_size < 0) t_last_size = 0;  // MPI_UNDEFINED: the size does not fit an int
    t_last_type = spec->datatype;
  }
  return static_cast<std::uint64_t>(spec->count) * static_cast<std::uint64_t>(t_last_size);
}

// What this thread's latest Peruse record was written from, while it is the latest record.
constinit thread_local LatestPeruse t_latest __attribute__((tls_model("initial-exec")));

PeruseArgs args_of(MPI_Aint unique_id, const peruse_comm_spec_t* spec, const void* param) noexcept {
  return PeruseArgs{param,          static_cast<std::intptr_t>(unique_id),
                    spec->datatype, spec->count,
                    spec->peer,     spec->tag,
                    spec->operation};
}

// The clock a record path reads. `Fast`: the caller saw that the records' clock is the TSC, so
// the read is one instruction and no call (now_ticks may call clock_gettime).
template <bool Fast>
[[gnu::always_inline]] inline std::uint64_t ticks() noexcept {
  if constexpr (Fast) return read_tsc();
  return now_ticks();
}

// The time of the record before `r` when the last event it holds is one `r` follows back to back
// (back_to_back.hpp), on the same communicator and request; otherwise the clock's. After a drain
// the record before is the flush region's Leave.
template <bool Fast>
[[gnu::always_inline]] inline std::uint64_t follower_time(const Record* r,
                                                          std::uint32_t sources) noexcept {
  if (sources != 0 && r != detail::t_buffer->begin) {
    const Record& before = r[-1];
    if (before.kind != RecordKind::Peruse) return ticks<Fast>();
    const CarriedPeruse last = last_peruse_event(before);
    const std::uint64_t request = last.without_request ? 0 : before.request;
    if ((sources >> last.event & 1u) != 0 && before.comm == r->comm &&
        (request == 0 || r->request == 0 || request == r->request))
      return before.time;
  }
  return ticks<Fast>();
}

// One callback per event, so the event is known at compile time and costs no lookup. The slot
// is stamped first and the fields are written straight into it. An event that may follow
// another back to back is stamped last, once its fields tell whether the record before it is
// that event.
//
// Two instantiations: `Fast` is the path of nearly every event, taken once the caller has seen
// that tracing is on, the thread's buffer has room, the clock is the TSC and the event carries
// no data or data of the type whose size this thread looked up last. It makes no call (but
// pack_ahead's, last), so the compiler saves no register for it; the general path (reserve, which
// may drain, clock_gettime, PMPI_Type_size) is a tail call away. The two write the same record.
template <std::size_t E, bool Fast>
[[gnu::always_inline]] inline int record_event(MPI_Aint unique_id, const peruse_comm_spec_t* spec,
                                               void* param) {
  constexpr auto event = static_cast<PeruseEvent>(E);
  Record* r;
  if constexpr (Fast) {
    r = detail::t_buffer->next;
  } else {
    r = reserve();
    if (r == nullptr) return MPI_SUCCESS;  // tracing is off, or this thread is not traced
  }
  constexpr bool follower = may_follow_back_to_back(event);
  if constexpr (!follower) r->time = ticks<Fast>();
  const auto* comm = static_cast<const CommEntry*>(param);
  // Cannot fail: a communicator is attached after its entry was published.
  if (!comm->published.load(std::memory_order_acquire)) return MPI_SUCCESS;
  const auto address = static_cast<std::uintptr_t>(unique_id);
  std::uint64_t bytes;
  if constexpr (Fast)
    bytes = spec->count > 0 ? static_cast<std::uint64_t>(spec->count) *
                                  static_cast<std::uint64_t>(static_cast<unsigned>(t_last_size))
                            : 0;
  else
    bytes = bytes_of(spec);

  std::uint64_t request = 0;
  if constexpr (event == PeruseEvent::REQ_ACTIVATE) {
    request = g_requests.activate(address);
  } else {
    if (address != 0) request = g_requests.id_of(address);
  }
  std::int64_t aux = 0;
  if constexpr (constexpr CounterChange c = counter_change(event); c.counter >= 0) {
    static_assert(c.counter < static_cast<int>(Metric::Count), "a counter the writer defines");
    const auto by = c.by_bytes ? static_cast<std::int64_t>(bytes) : 1;
    aux = g_counters[c.counter] += c.sign * by;
  }

  r->kind = RecordKind::Peruse;
  r->event = static_cast<std::uint8_t>(E);
  r->region = static_cast<std::uint16_t>(spec->operation & 0xf);  // above: carried events
  r->comm = comm->local_id;
  r->peer = comm->world_rank_of(spec->peer);
  r->tag = spec->tag;
  r->bytes = bytes;
  r->request = request;
  r->aux = static_cast<std::uint64_t>(aux);
  if constexpr (follower) r->time = follower_time<Fast>(r, g_time_sources[E]);
  commit();
  state::progress(r->time);
  if constexpr (event == PeruseEvent::REQ_XFER_BEGIN) state::transfer_begins();
  if constexpr (event == PeruseEvent::REQ_XFER_END) state::transfer_ends();
  if constexpr (may_carry(event))
    t_latest =
        LatestPeruse{r, r->time, args_of(unique_id, spec, param), static_cast<std::uint8_t>(E)};
  // The receive found no message: this thread is about to wait for one (a blocking receive) or
  // will wait later. Packing now takes from the next drain work it would do on the program's
  // time.
  if constexpr (event == PeruseEvent::REQ_INSERT_IN_POSTED_Q) pack_ahead(kPackAhead);
  return MPI_SUCCESS;
}

template <std::size_t E>
[[gnu::noinline]] int record_event_general(MPI_Aint unique_id, const peruse_comm_spec_t* spec,
                                           void* param) {
  return record_event<E, false>(unique_id, spec, param);
}

template <std::size_t E>
[[gnu::always_inline]] inline int record_event_any(MPI_Aint unique_id,
                                                   const peruse_comm_spec_t* spec, void* param) {
  const ThreadBuffer* b = detail::t_buffer;
  if (g_state.load(std::memory_order_relaxed) != TraceState::On || b == nullptr ||
      b->next == b->end || !tsc_ticks() || (spec->count > 0 && spec->datatype != t_last_type))
      [[unlikely]]
    return record_event_general<E>(unique_id, spec, param);
  return record_event<E, true>(unique_id, spec, param);
}

template <std::size_t E>
[[gnu::noinline]] int record_event_apart(MPI_Aint unique_id, const peruse_comm_spec_t* spec,
                                         void* param) {
  return record_event_any<E>(unique_id, spec, param);
}

// An event that only repeats the record before it rides in that record (carried_followers.hpp)
// and writes none. It tries that first, apart from the record path: the check calls nothing, so
// it saves fewer registers than the record path, and the record path is a tail call
// (docs/performance.md, "Instructions per round trip", counts what that saves).
template <std::size_t E>
int on_event(peruse_event_h, MPI_Aint unique_id, peruse_comm_spec_t* spec, void* param) {
  if constexpr (may_be_carried(static_cast<PeruseEvent>(E))) {
    ThreadBuffer* b = detail::t_buffer;
    if (b != nullptr && b->next != b->begin &&
        g_state.load(std::memory_order_relaxed) == TraceState::On &&
        carry_follower(b->next - 1, t_latest, E, args_of(unique_id, spec, param),
                       g_time_sources[E])) {
      state::progress(b->next[-1].time);
      if constexpr (static_cast<PeruseEvent>(E) == PeruseEvent::REQ_XFER_BEGIN)
        state::transfer_begins();
      if constexpr (static_cast<PeruseEvent>(E) == PeruseEvent::REQ_XFER_END)
        state::transfer_ends();
      return MPI_SUCCESS;
    }
    return record_event_apart<E>(unique_id, spec, param);
  } else {
    return record_event_any<E>(unique_id, spec, param);
  }
}

template <std::size_t... E>
constexpr std::array<peruse_comm_callback_f*, sizeof...(E)> make_callbacks(
    std::index_sequence<E...>) {
  return {&on_event<E>...};
}
constexpr auto kCallbacks = make_callbacks(std::make_index_sequence<kPeruseEventCount>{});

// Sample-only mode: MPI made progress for this thread, nothing is recorded.
template <std::size_t E>
int on_state_event(peruse_event_h, MPI_Aint, peruse_comm_spec_t*, void*) {
  state::progress(now_ticks());
  if constexpr (static_cast<PeruseEvent>(E) == PeruseEvent::REQ_XFER_BEGIN)
    state::transfer_begins();
  if constexpr (static_cast<PeruseEvent>(E) == PeruseEvent::REQ_XFER_END) state::transfer_ends();
  return MPI_SUCCESS;
}
template <std::size_t... E>
constexpr std::array<peruse_comm_callback_f*, sizeof...(E)> make_state_callbacks(
    std::index_sequence<E...>) {
  return {&on_state_event<E>...};
}
constexpr auto kStateCallbacks =
    make_state_callbacks(std::make_index_sequence<kPeruseEventCount>{});
const std::array<peruse_comm_callback_f*, kPeruseEventCount>* g_callbacks = &kCallbacks;

// The fewest events that say MPI works for the thread: every message's data moves between
// XFER_BEGIN and XFER_END (a match comes right before the first, the completion right after the
// second, so they would only repeat the time), and a long transfer says so at each fragment.
// Each callback costs a Peruse dispatch, which a message-bound run pays per message.
EventSet state_events() {
  EventSet e;
  for (PeruseEvent event :
       {PeruseEvent::REQ_XFER_BEGIN, PeruseEvent::REQ_XFER_CONTINUE, PeruseEvent::REQ_XFER_END})
    e.set(static_cast<std::size_t>(event));
  return e;
}

}  // namespace

StartResult start(const EventSet& requested, bool thread_multiple, bool state_only) {
  StartResult r;
  const EventSet selected = state_only && requested.any() ? state_events() : requested;
  g_callbacks = state_only ? &kStateCallbacks : &kCallbacks;
  if (selected.none()) return r;
  if (&PERUSE_Init == nullptr || PERUSE_Init() != PERUSE_SUCCESS) {
    r.notice =
        "this MPI has no Peruse (its libmpi lacks PERUSE_Init or PERUSE_Init failed): tracing MPI "
        "calls only. For Peruse events run under an Open MPI configured with --enable-peruse "
        "(scripts/setup builds one), or set MPITRACE_PERUSE_EVENTS=none to silence this notice.";
    return r;
  }
  std::string missing;
  for (const auto& e : kPeruseEvents) {
    const auto i = static_cast<std::size_t>(e.event);
    if (!selected.test(i)) continue;
    if (PERUSE_Query_event(std::string(e.full_name).c_str(), &g_mpi_id[i]) != PERUSE_SUCCESS) {
      missing += missing.empty() ? "" : ", ";
      missing += e.short_name;
      continue;
    }
    g_selected.set(i);
  }
  if (!missing.empty()) r.notice = "this MPI does not support the Peruse events " + missing;
  // Registered all the same: harmless, and a run that switches layers needs no other path.
  if (const std::string pml = selected_pml(); !pml.empty() && pml != "ob1")
    r.notice = "Open MPI selected pml " + pml +
               ", and Peruse events fire only in pml ob1: this trace has the MPI calls, messages "
               "and MPI_T values but no Peruse event. To see inside MPI, run with pml ob1 "
               "(perusetrace run --mca pml ob1 ..., or OMPI_MCA_pml=ob1).";
  g_active = g_selected.any();
  g_time_sources = time_sources(g_selected, thread_multiple);
  r.active = g_active;
  return r;
}

void attach(MPI_Comm comm, const CommEntry* entry) {
  if (!g_active || comm == MPI_COMM_NULL || entry == nullptr) return;
  std::lock_guard lock(g_mutex);
  auto [it, fresh] = g_handles.try_emplace(handle_key(comm));
  if (!fresh) return;  // Open MPI holds one handle per (communicator, event)
  Handles& handles = it->second;
  handles.fill(PERUSE_EVENT_HANDLE_NULL);
  for (std::size_t i = 0; i < kPeruseEventCount; ++i) {
    if (!g_selected.test(i)) continue;
    if (PERUSE_Event_comm_register(g_mpi_id[i], comm, (*g_callbacks)[i],
                                   const_cast<CommEntry*>(entry), &handles[i]) == PERUSE_SUCCESS) {
      if (!g_paused) PERUSE_Event_activate(handles[i]);
    } else {
      handles[i] = PERUSE_EVENT_HANDLE_NULL;
    }
  }
}

void detach(MPI_Comm comm) {
  if (!g_active) return;
  std::lock_guard lock(g_mutex);
  auto it = g_handles.find(handle_key(comm));
  if (it == g_handles.end()) return;
  for (auto& h : it->second) {
    if (h == PERUSE_EVENT_HANDLE_NULL) continue;
    PERUSE_Event_deactivate(h);
    PERUSE_Event_release(&h);
  }
  g_handles.erase(it);
}

void pause(bool paused) {
  if (!g_active) return;
  std::lock_guard lock(g_mutex);
  if (paused == g_paused) return;
  g_paused = paused;
  for (auto& [key, handles] : g_handles)
    for (auto& h : handles)
      if (h != PERUSE_EVENT_HANDLE_NULL)
        paused ? PERUSE_Event_deactivate(h) : PERUSE_Event_activate(h);
}

void stop() {
  if (!g_active) return;
  std::lock_guard lock(g_mutex);
  for (auto& [key, handles] : g_handles) {
    for (auto& h : handles) {
      if (h == PERUSE_EVENT_HANDLE_NULL) continue;
      PERUSE_Event_deactivate(h);
      PERUSE_Event_release(&h);
    }
  }
  g_handles.clear();
  g_active = false;
}

bool tracks_activation() noexcept {
  return g_active && g_selected.test(static_cast<std::size_t>(PeruseEvent::REQ_ACTIVATE));
}

}  // namespace perusetrace::peruse
