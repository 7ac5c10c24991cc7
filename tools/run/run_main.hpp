// `perusetrace run`: checks every setting before any rank starts, then runs the program under the
// mpirun of the MPI perusetrace was built against, with libperusetrace preloaded into the ranks.
#pragma once

int run_main(int argc, char** argv);
