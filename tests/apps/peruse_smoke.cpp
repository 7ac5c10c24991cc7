// Proves the MPI in use fires Peruse events: registers a callback for every supported event on
// MPI_COMM_WORLD, posts a receive before its send (the paper's early receiver), and checks the
// sequence the Open MPI Peruse paper describes. Run with 2 ranks. It fails, never skips, on an
// MPI without Peruse: it links against PERUSE_* and checks that events arrive.
#include <mpi.h>
// peruse.h declares C functions without an extern "C" guard of its own.
extern "C" {
#include <peruse.h>
}
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "events/catalogue.hpp"

namespace {

constexpr int kTag = 4242;
constexpr int kCount = 10000;  // the paper's message: 10 000 MPI_INT, beyond the eager limit

struct Seen {
  int event;
  int operation;
  int count;
};
std::vector<Seen> seen;  // a test program, not the tracer: allocation here is fine

int on_event(peruse_event_h handle, MPI_Aint, peruse_comm_spec_t* spec, void*) {
  int event = -1;
  PERUSE_Event_get(handle, &event);
  if (spec->tag == kTag) seen.push_back({event, spec->operation, spec->count});
  return MPI_SUCCESS;
}

std::string name_of(int event) {
  char* name = nullptr;
  if (PERUSE_Query_event_name(event, &name) != PERUSE_SUCCESS || !name) return "?";
  std::string out = name;
  free(name);
  return out;
}

int fail(int rank, const std::string& why) {
  std::fprintf(stderr, "peruse_smoke rank %d: FAIL: %s\n", rank, why.c_str());
  return 1;
}

// Every name of `expected` must appear in `got`, in that order (others may come between).
bool contains_in_order(const std::vector<Seen>& got, const std::vector<const char*>& expected,
                       std::string& missing) {
  std::size_t next = 0;
  for (const Seen& s : got) {
    if (next < expected.size() && name_of(s.event) == expected[next]) ++next;
  }
  if (next == expected.size()) return true;
  missing = expected[next];
  return false;
}

int check(int rank) {
  int supported = 0;
  char** names = nullptr;
  int* ids = nullptr;
  if (PERUSE_Init() != PERUSE_SUCCESS) return fail(rank, "PERUSE_Init failed");
  if (PERUSE_Query_supported_events(&supported, &names, &ids) != PERUSE_SUCCESS)
    return fail(rank, "PERUSE_Query_supported_events failed");
  if (rank == 0) std::printf("peruse_smoke: the MPI supports %d Peruse events\n", supported);
  for (const auto& e : perusetrace::kPeruseEvents) {
    int id = -1;
    if (PERUSE_Query_event(std::string(e.full_name).c_str(), &id) != PERUSE_SUCCESS)
      return fail(rank, "the MPI does not know " + std::string(e.full_name));
  }

  std::vector<peruse_event_h> handles(supported);
  for (int i = 0; i < supported; ++i) {
    if (PERUSE_Event_comm_register(ids[i], MPI_COMM_WORLD, on_event, nullptr, &handles[i]) !=
            PERUSE_SUCCESS ||
        PERUSE_Event_activate(handles[i]) != PERUSE_SUCCESS)
      return fail(rank, std::string("cannot register ") + names[i]);
  }

  std::vector<int> buf(kCount, rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    usleep(200 * 1000);  // the sender is late, so the receive is posted first
    MPI_Send(buf.data(), kCount, MPI_INT, 1, kTag, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(buf.data(), kCount, MPI_INT, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (auto& h : handles) {
    PERUSE_Event_deactivate(h);
    PERUSE_Event_release(&h);
  }

  for (const Seen& s : seen) {
    std::printf("rank %d %-5s %-36s count:%d\n", rank, s.operation == PERUSE_SEND ? "send" : "recv",
                name_of(s.event).c_str(), s.count);
  }
  std::vector<const char*> expected;
  if (rank == 1) {
    expected = {"PERUSE_COMM_REQ_ACTIVATE",
                "PERUSE_COMM_SEARCH_UNEX_Q_BEGIN",
                "PERUSE_COMM_SEARCH_UNEX_Q_END",
                "PERUSE_COMM_REQ_INSERT_IN_POSTED_Q",
                "PERUSE_COMM_MSG_ARRIVED",
                "PERUSE_COMM_SEARCH_POSTED_Q_BEGIN",
                "PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q",
                "PERUSE_COMM_MSG_MATCH_POSTED_REQ",
                "PERUSE_COMM_SEARCH_POSTED_Q_END",
                "PERUSE_COMM_REQ_XFER_BEGIN",
                "PERUSE_COMM_REQ_XFER_CONTINUE",
                "PERUSE_COMM_REQ_XFER_END",
                "PERUSE_COMM_REQ_COMPLETE"};
  } else if (rank == 0) {
    // Open MPI 4.1.4's sender reports the fragments it pipelines after the rendezvous header
    // (XFER_CONTINUE) before XFER_BEGIN, which it signals when the receiver's ACK arrives.
    expected = {"PERUSE_COMM_REQ_ACTIVATE", "PERUSE_COMM_REQ_XFER_BEGIN",
                "PERUSE_COMM_REQ_XFER_END", "PERUSE_COMM_REQ_COMPLETE"};
  }
  std::string missing;
  if (!contains_in_order(seen, expected, missing))
    return fail(rank, "the early-receiver sequence lacks " + missing + " (or has it out of order)");
  // Fragments: the receiver's XFER_CONTINUE counts are bytes and add up to the whole message.
  long fragment_bytes = 0, fragments = 0;
  for (const Seen& s : seen) {
    if (name_of(s.event) != "PERUSE_COMM_REQ_XFER_CONTINUE") continue;
    fragment_bytes += s.count;
    ++fragments;
  }
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
  // Open MPI 5's shared memory lets the receiver pull the message in one single copy: one
  // fragment of all of it on the receiver, none on the sender.
  const long want_fragments = rank == 1 ? 1 : 0;
  if (fragments != want_fragments)
    return fail(rank, "expected the 40 000-byte message in " + std::to_string(want_fragments) +
                          " fragment(s) on Open MPI 5, saw " + std::to_string(fragments) +
                          " XFER_CONTINUE");
#else
  if (fragments < 2)
    return fail(rank, "expected the 40 000-byte message in several fragments, saw " +
                          std::to_string(fragments) + " XFER_CONTINUE");
#endif
  if (rank == 1 && fragment_bytes != kCount * static_cast<long>(sizeof(int)))
    return fail(rank, "receiver fragments add up to " + std::to_string(fragment_bytes) +
                          " bytes, not " + std::to_string(kCount * sizeof(int)));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc = size == 2 ? check(rank) : fail(rank, "run with exactly 2 ranks");
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::printf("peruse_smoke: %s\n", worst ? "FAILED" : "passed");
  MPI_Finalize();
  return worst;
}
