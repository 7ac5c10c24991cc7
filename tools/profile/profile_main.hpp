// perusetrace profile ARCHIVE [--json FILE] [--html FILE] [--folded FILE]: the samples of an
// archive traced with MPITRACE_SAMPLING, as time per call path, function, MPI call site and
// rank, split by MPI state.
#pragma once

int profile_main(int argc, char** argv);
