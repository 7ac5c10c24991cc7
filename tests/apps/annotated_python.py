"""The Python module (python/perusetrace.py) on 2 ranks (tests/runtime/annotate_test.py, case python).

MPI through ctypes: the ranks' libmpi is the one the preloaded tracer was built with, which the
interpreter finds already loaded; the tracer's output names the trace it wrote. Rank 0 sends MESSAGES messages to rank 1 inside
py:phase=exchange and region=solve, with iteration set to 7 before.
    python3 annotated_python.py MESSAGES
"""
import ctypes
import sys

import perusetrace

MESSAGES = int(sys.argv[1]) if len(sys.argv) > 1 else 5

libmpi = ctypes.CDLL("libmpi.so.40", mode=ctypes.RTLD_GLOBAL)
# The functions through the process's global scope, as a binding's calls resolve: the preloaded
# tracer's wrappers come first (a symbol looked up in libmpi itself would bypass them).
mpi = ctypes.CDLL(None)
handle = ctypes.c_void_p
world = handle(ctypes.addressof(ctypes.c_char.in_dll(libmpi, "ompi_mpi_comm_world")))
char = handle(ctypes.addressof(ctypes.c_char.in_dll(libmpi, "ompi_mpi_char")))
mpi.MPI_Init.argtypes = [handle, handle]
mpi.MPI_Comm_rank.argtypes = [handle, ctypes.POINTER(ctypes.c_int)]
mpi.MPI_Send.argtypes = [handle, ctypes.c_int, handle, ctypes.c_int, ctypes.c_int, handle]
mpi.MPI_Recv.argtypes = [handle, ctypes.c_int, handle, ctypes.c_int, ctypes.c_int, handle,
                         handle]

phase = perusetrace.Attribute("phase", module="py")
iteration = perusetrace.Attribute("iteration")
mpi.MPI_Init(None, None)
rank = ctypes.c_int()
mpi.MPI_Comm_rank(world, ctypes.byref(rank))
buffer = ctypes.create_string_buffer(64)
iteration.set(7)
with phase.scope("exchange"), perusetrace.region("solve"):
    for m in range(MESSAGES):
        if rank.value == 0:
            mpi.MPI_Send(buffer, 64, char, 1, m, world)
        else:
            mpi.MPI_Recv(buffer, 64, char, 0, m, world, None)
mpi.MPI_Finalize()
if rank.value == 0:
    print(f"annotated_python: done, tracer {'present' if perusetrace.available() else 'absent'}")
