/* The C half of the mixed C/Fortran program (known_counts_fortran.F90 built with -DMIXED): calls
 * made from C on a communicator Fortran hands over, which the trace must hold once each, like
 * the Fortran ones. */
#include <mpi.h>

void c_exchange(const MPI_Fint* comm_f, int* sends, int* recvs, int* colls) {
  const MPI_Comm comm = MPI_Comm_f2c(*comm_f);
  int me, value = 5, sum;
  MPI_Comm_rank(comm, &me);
  const int partner = me ^ 1;
  if (me % 2 == 0) {
    MPI_Send(&value, 1, MPI_INT, partner, 70, comm);
    MPI_Recv(&value, 1, MPI_INT, partner, 70, comm, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&value, 1, MPI_INT, partner, 70, comm, MPI_STATUS_IGNORE);
    MPI_Send(&value, 1, MPI_INT, partner, 70, comm);
  }
  MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, comm);
  *sends += 1, *recvs += 1, *colls += 1;
}
