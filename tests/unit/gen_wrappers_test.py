#!/usr/bin/python3
"""The wrapper generator stops, naming the line, on a spec it cannot turn into wrappers: an
unknown RECORD keyword, a keyword's missing parameters, a parameter no Fortran wrapper can
convert; every keyword has a template; and the Fortran wrappers convert what they record and
pass the rest through to the MPI's own Fortran entry with every hidden string length.

    gen_wrappers_test.py GEN_WRAPPERS.PY
"""
import importlib.util
import os
import subprocess
import sys
import tempfile

SEND = ("MPI_Send | p2p | point2point | {record} | int MPI_Send(const void *buf, int count, "
        "MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)\n")
ARGV = ("MPI_Send | p2p | point2point | send | int MPI_Send(const void *buf, int count, "
        "MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, char *argv[])\n")
INFO_SET = ("MPI_Info_set | info | function | plain | int MPI_Info_set(MPI_Info info, "
            "const char *key, const char *value)\n")
NO_TAG = ("MPI_Send | p2p | point2point | send | int MPI_Send(const void *buf, int count, "
          "MPI_Datatype datatype, int dest, MPI_Comm comm)\n")


def generate(gen, spec_text, work):
    spec = os.path.join(work, "test.spec")
    with open(spec, "w") as f:
        f.write("# a test spec\n" + spec_text)
    return subprocess.run([sys.executable, gen, spec, work], capture_output=True, text=True)


def main():
    gen = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as work:
        ok = generate(gen, SEND.format(record="send"), work)
        if ok.returncode != 0 or "perusetrace::on_send" not in open(
                os.path.join(work, "mpi_wrappers.cpp")).read():
            failures.append(f"a valid send row did not generate its handler call: {ok.stderr}")
        bad = generate(gen, SEND.format(record="sendd"), work)
        if bad.returncode == 0 or "line 2: unknown RECORD 'sendd'" not in bad.stderr:
            failures.append(f"an unknown RECORD keyword was accepted: {bad.returncode} "
                            f"{bad.stderr!r}")
        fortran = open(os.path.join(work, "fortran_wrappers.cpp")).read()
        for needed in ("void fortran_MPI_Send(const void* buf, MPI_Fint* count, "
                       "MPI_Fint* datatype, MPI_Fint* dest, MPI_Fint* tag, MPI_Fint* comm, "
                       "MPI_Fint* ierr)", "PMPI_Comm_f2c(*comm)", "fortran::buffer(buf)",
                       "void mpi_send_(", "void MPI_SEND(", "void mpi_send_f08_("):
            if needed not in fortran:
                failures.append(f"the Fortran MPI_Send lacks '{needed}'")
        unconvertible = generate(gen, ARGV, work)
        if unconvertible.returncode == 0 or "line 2: no Fortran wrapper" not in \
                unconvertible.stderr or "char *argv[]" not in unconvertible.stderr:
            failures.append(f"a parameter no Fortran wrapper converts was accepted: "
                            f"{unconvertible.stderr!r}")
        through = generate(gen, INFO_SET, work)
        fortran = open(os.path.join(work, "fortran_wrappers.cpp")).read()
        if through.returncode != 0 or "pmpi_info_set_(a0, a1, a2, ierr, l0, l1)" not in fortran \
                or "pmpi_info_set_f08_(a0, a1, a2, ierr, l0, l1)" not in fortran:
            failures.append("a plain row is not passed through with its two string lengths: "
                            f"{through.stderr!r}")
        missing = generate(gen, NO_TAG, work)
        if missing.returncode == 0 or "needs parameter(s) tag" not in missing.stderr:
            failures.append(f"a send row without 'tag' was accepted: {missing.stderr!r}")
    spec = importlib.util.spec_from_file_location("gen_wrappers", gen)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not module.WAITING_RECORDS <= module.RECORDS:
        failures.append(f"waiting records without a template: "
                        f"{module.WAITING_RECORDS - module.RECORDS}")
    if set(module.BODIES) & set(module.WHOLE):
        failures.append(f"keywords with two templates: {set(module.BODIES) & set(module.WHOLE)}")
    for f in failures:
        print(f"FAILED: {f}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
