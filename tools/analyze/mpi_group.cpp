#include "tools/analyze/mpi_group.hpp"

#include <fmt/core.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <vector>

namespace perusetrace::analyze {

namespace {

// A part travels as its length, then in pieces MPI's int counts can hold.
constexpr std::uint64_t kPiece = std::uint64_t{1} << 30;
constexpr int kLengthTag = 1, kPieceTag = 2;

}  // namespace

MpiGroup::MpiGroup() {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  rank_ = static_cast<unsigned>(rank);
  size_ = static_cast<unsigned>(size);
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int on_host = 1;
  MPI_Comm_size(host, &on_host);
  MPI_Comm_free(&host);
  on_host_ = static_cast<unsigned>(on_host);
}

std::string MpiGroup::agree(const std::string& failure) {
  int mine = failure.empty() ? static_cast<int>(size_) : static_cast<int>(rank_), first = 0;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == static_cast<int>(size_)) return "";
  unsigned long long length = failure.size();
  MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, first, MPI_COMM_WORLD);
  std::string message(length, '\0');
  if (static_cast<int>(rank_) == first) message = failure;
  MPI_Bcast(message.data(), static_cast<int>(length), MPI_CHAR, first, MPI_COMM_WORLD);
  return message;
}

void MpiGroup::send(const std::string& bytes, unsigned to) {
  unsigned long long length = bytes.size();
  MPI_Send(&length, 1, MPI_UNSIGNED_LONG_LONG, static_cast<int>(to), kLengthTag, MPI_COMM_WORLD);
  for (std::uint64_t at = 0; at < bytes.size(); at += kPiece) {
    const auto n = static_cast<int>(std::min<std::uint64_t>(kPiece, bytes.size() - at));
    MPI_Send(bytes.data() + at, n, MPI_BYTE, static_cast<int>(to), kPieceTag, MPI_COMM_WORLD);
  }
  sent_ += sizeof length + bytes.size();
}

std::string MpiGroup::receive(unsigned from) {
  unsigned long long length = 0;
  MPI_Recv(&length, 1, MPI_UNSIGNED_LONG_LONG, static_cast<int>(from), kLengthTag, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  std::string bytes(length, '\0');
  for (std::uint64_t at = 0; at < bytes.size(); at += kPiece) {
    const auto n = static_cast<int>(std::min<std::uint64_t>(kPiece, bytes.size() - at));
    MPI_Recv(bytes.data() + at, n, MPI_BYTE, static_cast<int>(from), kPieceTag, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
  }
  return bytes;
}

// A binomial tree: at step s, each rank that is an odd multiple of s sends its part to the rank
// s below it and is done; the others take the part of the rank s above them, if there is one.
// Rank 0 merges last. The parts merge in the same order on every run.
void MpiGroup::reduce(std::string& part, const Merge& merge) {
  for (unsigned step = 1; step < size_; step *= 2) {
    if (rank_ % (2 * step) == step) {
      send(part, rank_ - step);
      return;
    }
    if (rank_ % (2 * step) == 0 && rank_ + step < size_) {
      const std::string other = receive(rank_ + step);
      try {
        merge(part, other);
      } catch (const std::exception& e) {
        // The ranks below wait for this one: only ending the job ends their wait.
        fmt::print(stderr, "perusetrace-analyze: rank {} could not merge rank {}'s results: {}\n",
                   rank_, rank_ + step, e.what());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }
}

void MpiGroup::broadcast(std::string& text) {
  unsigned long long length = text.size();
  MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (rank_ == 0) sent_ += (size_ - 1) * (sizeof length + length);
  text.resize(length);
  for (std::uint64_t at = 0; at < length; at += kPiece) {
    const auto n = static_cast<int>(std::min<std::uint64_t>(kPiece, length - at));
    MPI_Bcast(text.data() + at, n, MPI_CHAR, 0, MPI_COMM_WORLD);
  }
}

// In size()-1 rounds, rank r sends to r+k and receives from r-k (mod size): every pair once,
// one part in flight each way, in pieces MPI's int counts can hold.
std::vector<std::string> MpiGroup::exchange(std::vector<std::string> outgoing) {
  outgoing.resize(size_);
  std::vector<std::string> incoming(size_);
  incoming[rank_] = std::move(outgoing[rank_]);
  for (unsigned k = 1; k < size_; ++k) {
    const int to = static_cast<int>((rank_ + k) % size_);
    const int from = static_cast<int>((rank_ + size_ - k) % size_);
    const std::string& mine = outgoing[static_cast<unsigned>(to)];
    unsigned long long length = mine.size(), theirs = 0;
    MPI_Sendrecv(&length, 1, MPI_UNSIGNED_LONG_LONG, to, kLengthTag, &theirs, 1,
                 MPI_UNSIGNED_LONG_LONG, from, kLengthTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    std::string& got = incoming[static_cast<unsigned>(from)];
    got.resize(theirs);
    std::vector<MPI_Request> pieces;
    for (std::uint64_t at = 0; at < theirs; at += kPiece)
      MPI_Irecv(got.data() + at, static_cast<int>(std::min<std::uint64_t>(kPiece, theirs - at)),
                MPI_BYTE, from, kPieceTag, MPI_COMM_WORLD, &pieces.emplace_back());
    for (std::uint64_t at = 0; at < length; at += kPiece)
      MPI_Isend(mine.data() + at, static_cast<int>(std::min<std::uint64_t>(kPiece, length - at)),
                MPI_BYTE, to, kPieceTag, MPI_COMM_WORLD, &pieces.emplace_back());
    MPI_Waitall(static_cast<int>(pieces.size()), pieces.data(), MPI_STATUSES_IGNORE);
    sent_ += sizeof length + length;
    outgoing[static_cast<unsigned>(to)].clear();
    outgoing[static_cast<unsigned>(to)].shrink_to_fit();
  }
  return incoming;
}

std::string MpiGroup::gather_stats(const std::string& mine) {
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(rank_ == 0 ? size_ : 0), at(rank_ == 0 ? size_ : 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (rank_ == 0) {
    int total = 0;
    for (unsigned r = 0; r < size_; ++r) at[r] = total, total += lengths[r];
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), at.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  if (rank_ != 0) return "";
  std::string out = "[";
  for (unsigned r = 0; r < size_; ++r)
    out += (r ? "," : "") +
           all.substr(static_cast<std::size_t>(at[r]), static_cast<std::size_t>(lengths[r]));
  return out + "]";
}

}  // namespace perusetrace::analyze
