// `perusetrace info ARCHIVE`: what a trace holds, from its definitions alone (no event is read,
// so it answers at once on any size): who wrote it and how, ranks per host, threads, clocks,
// the Peruse events and MPI_T variables traced, communicators, windows, files.
#pragma once

int info_main(int argc, char** argv);
