// `perusetrace recover DIR`: the OTF2 archive of a run that never reached MPI_Finalize, made
// from the journal its ranks left in DIR.
#pragma once

int recover_main(int argc, char** argv);
