// `perusetrace mpit`: MPI_T's variables exist only inside an MPI process, so the helper program
// mpit_list lists them from a 1-rank job of the MPI perusetrace was built with.
#pragma once

int mpit_main(int argc, char** argv);
