/* A small halo-exchange "library" with annotations of its own (module "halo"), independent of
 * the program's: its attribute "phase" never mixes with the program's "phase". */
#ifndef HALO_H
#define HALO_H

#include <mpi.h>

/* Exchanges one value with each neighbour of a ring: u[0] and u[n + 1] are the halo cells. */
void halo_exchange(double* u, int n, MPI_Comm comm);

#endif
