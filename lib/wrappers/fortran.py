"""The Fortran wrappers, from the same spec rows as the C ones (gen_wrappers.py writes them).

Open MPI's Fortran bindings call the C profiling entries (PMPI_Send) directly, so a Fortran
program's calls never reach the C wrappers. Each function gets a Fortran entry of its own, under
every name a Fortran compiler may give it (mpi_send_, mpi_send__, mpi_send, MPI_SEND) and under
the mpi_f08 module's (mpi_send_f08_, which takes the same arguments: a derived-type handle holds
one INTEGER, and ierror may be absent):

  - a function the wrappers record more than the call of (messages, requests, collectives,
    communicators, files, windows) has its arguments converted (handles with PMPI_*_f2c,
    MPI_BOTTOM, MPI_IN_PLACE, statuses, blank-padded strings, 1-based indices) and calls the C
    wrapper, so a Fortran call records exactly what the C call does, once;
  - a function recorded as a call only (RECORD plain) is timed around the MPI's own Fortran
    entry (pmpi_comm_rank_), which does its conversions, whatever its arguments (callbacks,
    attributes, strings out).

A row whose arguments Converted cannot take, and that is not plain, stops the build, naming
the line: no function is left for a Fortran program to call past the tracer unseen.
"""

HANDLES = {
    "MPI_Comm": ("Comm", "MPI_COMM_NULL"), "MPI_Datatype": ("Type", "MPI_DATATYPE_NULL"),
    "MPI_Group": ("Group", "MPI_GROUP_NULL"), "MPI_Request": ("Request", "MPI_REQUEST_NULL"),
    "MPI_Op": ("Op", "MPI_OP_NULL"), "MPI_Info": ("Info", "MPI_INFO_NULL"),
    "MPI_Errhandler": ("Errhandler", "MPI_ERRHANDLER_NULL"), "MPI_Win": ("Win", "MPI_WIN_NULL"),
    "MPI_File": ("File", "MPI_FILE_NULL"), "MPI_Message": ("Message", "MPI_MESSAGE_NULL"),
}
WIDE = ("MPI_Aint", "MPI_Offset", "MPI_Count")
# Handles a call only writes: no f2c of what the Fortran variable held before.
CREATING = {"isend", "irecv", "send_init", "recv_init", "icoll", "comm_new", "win_create",
            "file_open", "mprobe", "file_iread", "file_iwrite", "rma_op", "imrecv"}
WEIGHTS = {"weights", "sourceweights", "destweights"}
NS = "perusetrace::fortran"
# Polls timed around the MPI's own Fortran entry (the others call the C wrappers, which fold):
# their LOGICAL flag, by parameter name, says whether the call found something.
POLL_FLAGS = {"MPI_Iprobe": "flag", "MPI_Request_get_status": "flag"}


class Unsupported(Exception):
    """A parameter the converting wrappers do not know how to hand to C."""


def base_type(p):
    return p.type.replace("const", "").replace(" ", "")


def output_only(f, p):
    if p.name == "message":
        return f.record == "mprobe"
    if p.name == "request":
        return f.record not in ("wait", "test", "start", "request_free")
    return f.record in CREATING


def array_length(f, p):
    """The number of elements of a handle or status array, as a C expression."""
    if p.name in ("array_of_requests", "array_of_statuses"):
        n = f.first("count", "incount")
        if n:
            return f"*{n}"
    if p.name in ("sendtypes", "recvtypes") and "comm" in f.by_name:
        if "neighbor" in f.name.lower():
            return f"{NS}::neighbours(c_comm, {'true' if p.name == 'sendtypes' else 'false'})"
        return f"{NS}::alltoallw_peers(c_comm)"
    raise Unsupported(f"{f.name}: no length known for the array {p.name}")


class Converted:
    """A converting wrapper being built: its Fortran parameters, the lines before the C call,
    the C call's arguments and the lines after it."""

    def __init__(self, f):
        self.f, self.params, self.hidden = f, [], []
        self.first, self.arrays, self.args, self.after = [], [], [], []
        self.scratch = False

    def nomem(self, name):
        return f"if ({name} == nullptr) return {NS}::no_memory(ierr);"

    def add(self, p):
        f, n, t = self.f, p.name, base_type(p)
        if t in ("int",) and not p.array:
            self.params.append(f"MPI_Fint* {n}")
            self.args.append(f"*{n}")
        elif t in ("int*",) or (t == "int" and p.array):
            self.params.append(f"MPI_Fint* {n}")
            if "[3]" in p.text:
                self.args.append(f"reinterpret_cast<int(*)[3]>({n})")
            elif n in WEIGHTS:
                self.args.append(f"{NS}::weights({n})")
            else:
                self.args.append(n)
            if n == "index":  # C counts requests from 0, Fortran from 1
                self.after.append(f"if (rc == MPI_SUCCESS && *{n} >= 0) ++*{n};")
            if n == "array_of_indices":
                self.after.append("if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED) "
                                  f"for (int i = 0; i < *outcount; ++i) ++{n}[i];")
        elif t in WIDE and not p.array:
            self.params.append(f"{t}* {n}")
            self.args.append(f"*{n}")
        elif t.rstrip("*") in WIDE:
            self.params.append(f"{t.rstrip('*')}* {n}")
            self.args.append(n)
        elif t == "void*":
            const = "const " if p.type.startswith("const") else ""
            self.params.append(f"{const}void* {n}")
            self.args.append(f"{NS}::buffer({n})")
        elif t in HANDLES and not p.array:
            kind, _ = HANDLES[t]
            self.params.append(f"MPI_Fint* {n}")
            self.first.append(f"const {t} c_{n} = PMPI_{kind}_f2c(*{n});")
            self.args.append(f"c_{n}")
        elif t.rstrip("*") in HANDLES and not p.array:
            t = t.rstrip("*")
            kind, null = HANDLES[t]
            self.params.append(f"MPI_Fint* {n}")
            start = null if output_only(f, p) else f"PMPI_{kind}_f2c(*{n})"
            self.first.append(f"{t} c_{n} = {start};")
            self.args.append(f"&c_{n}")
            self.after.append(f"*{n} = PMPI_{kind}_c2f(c_{n});")
        elif t in HANDLES and p.array:
            kind, _ = HANDLES[t]
            length = array_length(f, p)
            self.params.append(f"MPI_Fint* {n}")
            self.scratch = True
            self.arrays += [f"const int n_{n} = {length};",
                            f"{t}* const c_{n} = scratch.take<{t}>(n_{n});", self.nomem(f"c_{n}"),
                            f"for (int i = 0; i < n_{n}; ++i) c_{n}[i] = PMPI_{kind}_f2c({n}[i]);"]
            self.args.append(f"c_{n}")
            if not p.type.startswith("const"):
                self.after.append(f"for (int i = 0; i < n_{n}; ++i) {n}[i] = "
                                  f"PMPI_{kind}_c2f(c_{n}[i]);")
        elif t == "MPI_Status*" and not p.array:
            self.params.append(f"MPI_Fint* {n}")
            self.first += [f"MPI_Status c_{n}{{}};",
                           f"MPI_Status* const s_{n} = {NS}::status_ignored({n}) ? "
                           f"MPI_STATUS_IGNORE : &c_{n};"]
            self.args.append(f"s_{n}")
            self.after.append(f"if (s_{n} != MPI_STATUS_IGNORE) PMPI_Status_c2f(&c_{n}, {n});")
        elif t == "MPI_Status" and p.array:
            length = array_length(f, p)
            self.params.append(f"MPI_Fint* {n}")
            self.scratch = True
            # MPI_STATUSES_IGNORE may be a null pointer (Open MPI's is): not a failed take.
            self.arrays += [f"const int n_{n} = {length};",
                            f"const bool ignored_{n} = {NS}::statuses_ignored({n});",
                            f"MPI_Status* const c_{n} = ignored_{n} ? "
                            f"MPI_STATUSES_IGNORE : scratch.take<MPI_Status>(n_{n});",
                            f"if (!ignored_{n} && c_{n} == nullptr) "
                            f"return {NS}::no_memory(ierr);"]
            self.args.append(f"c_{n}")
            filled = f"n_{n}"
            if "outcount" in f.by_name:
                filled = "(*outcount == MPI_UNDEFINED ? 0 : *outcount)"
            self.after.append(f"if (!ignored_{n}) for (int i = 0; i < {filled}; "
                              f"++i) PMPI_Status_c2f(&c_{n}[i], {n} + i * {NS}::kStatusInts);")
        elif t == "char*" and p.type.startswith("const") and not p.array:
            self.params.append(f"const char* {n}")
            self.hidden.append(f"std::size_t {n}_length")
            self.scratch = True
            self.first.append(f"const char* const c_{n} = scratch.c_string({n}, {n}_length);")
            self.args.append(f"c_{n}")
        else:
            raise Unsupported(f"{f.name}: parameter '{p.text}'")

    def signature(self, name):
        params = self.params + ["MPI_Fint* ierr"] + self.hidden
        return f"void {name}({', '.join(params)})"

    def body(self):
        lines = [f"{NS}::Scratch scratch;"] if self.scratch else []
        lines += self.first + self.arrays
        lines.append(f"const int rc = {self.f.name}({', '.join(self.args)});")
        lines += self.after
        lines.append("if (ierr != nullptr) *ierr = rc;")
        return lines


def special(f):
    """The rows whose Fortran binding is not their C prototype's: (parameters, body)."""
    if f.name == "MPI_Init":
        return ["MPI_Fint* ierr"], ["int argc = 0;", "char** argv = nullptr;",
                                    "const int rc = MPI_Init(&argc, &argv);",
                                    "if (ierr != nullptr) *ierr = rc;"]
    if f.name == "MPI_Init_thread":
        return (["MPI_Fint* required", "MPI_Fint* provided", "MPI_Fint* ierr"],
                ["int argc = 0;", "char** argv = nullptr;",
                 "const int rc = MPI_Init_thread(&argc, &argv, *required, provided);",
                 "if (ierr != nullptr) *ierr = rc;"])
    if f.name == "MPI_Pcontrol":  # MPI_PCONTROL(LEVEL) has no IERROR
        return ["MPI_Fint* level"], ["MPI_Pcontrol(*level);"]
    if f.name == "MPI_Comm_spawn":
        return SPAWN
    if f.name == "MPI_Comm_spawn_multiple":
        return SPAWN_MULTIPLE
    return None


# The spawns: commands and arguments are blank-padded strings and arrays of them (ended by a
# blank entry), significant at the root only, where they are converted.
SPAWN = (["const char* command", "const char* argv", "MPI_Fint* maxprocs", "MPI_Fint* info",
          "MPI_Fint* root", "MPI_Fint* comm", "MPI_Fint* intercomm",
          "MPI_Fint* array_of_errcodes", "MPI_Fint* ierr", "std::size_t command_length",
          "std::size_t argv_length"],
         [f"{NS}::Scratch scratch;",
          "const MPI_Comm c_comm = PMPI_Comm_f2c(*comm);",
          f"const bool at_root = {NS}::is_root(c_comm, *root);",
          f"const bool no_argv = !at_root || {NS}::argv_null(argv);",
          "const char* const c_command = at_root ? scratch.c_string(command, command_length) "
          ": nullptr;",
          "char** const c_argv = no_argv ? MPI_ARGV_NULL : scratch.argv(argv, argv_length, "
          "argv_length);",
          f"if (!no_argv && c_argv == nullptr) return {NS}::no_memory(ierr);",
          "MPI_Comm c_intercomm = MPI_COMM_NULL;",
          "const int rc = MPI_Comm_spawn(c_command, c_argv, *maxprocs, PMPI_Info_f2c(*info), "
          f"*root, c_comm, &c_intercomm, {NS}::errcodes(array_of_errcodes));",
          "*intercomm = PMPI_Comm_c2f(c_intercomm);",
          "if (ierr != nullptr) *ierr = rc;"])
SPAWN_MULTIPLE = (
    ["MPI_Fint* count", "const char* array_of_commands", "const char* array_of_argv",
     "MPI_Fint* array_of_maxprocs", "MPI_Fint* array_of_info", "MPI_Fint* root",
     "MPI_Fint* comm", "MPI_Fint* intercomm", "MPI_Fint* array_of_errcodes", "MPI_Fint* ierr",
     "std::size_t commands_length", "std::size_t argv_length"],
    [f"{NS}::Scratch scratch;",
     "const MPI_Comm c_comm = PMPI_Comm_f2c(*comm);",
     f"const bool at_root = {NS}::is_root(c_comm, *root);",
     "const int n = at_root ? *count : 0;",
     "char** const c_commands = at_root ? scratch.take<char*>(n) : nullptr;",
     "MPI_Info* const c_infos = at_root ? scratch.take<MPI_Info>(n) : nullptr;",
     f"const bool no_argvs = !at_root || {NS}::argvs_null(array_of_argv);",
     "char*** const c_argvs = no_argvs ? MPI_ARGVS_NULL : scratch.take<char**>(n);",
     f"if (at_root && (!c_commands || !c_infos || (!no_argvs && !c_argvs))) "
     f"return {NS}::no_memory(ierr);",
     "for (int i = 0; i < n; ++i) {",
     "  c_commands[i] = const_cast<char*>(scratch.c_string(array_of_commands + i * "
     "commands_length, commands_length));",
     "  c_infos[i] = PMPI_Info_f2c(array_of_info[i]);",
     "  // array_of_argv(count, *): command i's arguments are `count` entries apart",
     "  if (!no_argvs && !(c_argvs[i] = scratch.argv(array_of_argv + i * argv_length, "
     f"argv_length, n * argv_length))) return {NS}::no_memory(ierr);",
     "}",
     "MPI_Comm c_intercomm = MPI_COMM_NULL;",
     "const int rc = MPI_Comm_spawn_multiple(*count, c_commands, c_argvs, array_of_maxprocs, "
     f"c_infos, *root, c_comm, &c_intercomm, {NS}::errcodes(array_of_errcodes));",
     "*intercomm = PMPI_Comm_c2f(c_intercomm);",
     "if (ierr != nullptr) *ierr = rc;"])


def manglings(name):
    """Every external name Fortran compilers give the subroutine `name`."""
    low = name.lower()
    return [low, low + "_", low + "__", name.upper()]


def hidden_lengths(f):
    # A CHARACTER dummy, scalar or array, has one hidden length after the explicit arguments.
    return sum(1 for p in f.params if "char" in p.type)


class Generated:
    def __init__(self):
        self.declarations, self.shims, self.aliases = [], [], []

    def alias(self, ret, params, target, names):
        for name in names:
            self.aliases.append(f"{ret} {name}({params}) __attribute__((alias(\"{target}\")));")

    def converted(self, f):
        shim = f"fortran_{f.name}"
        spec = special(f)
        if spec:
            params, body = spec
            signature = f"void {shim}({', '.join(params)})"
        else:
            c = Converted(f)
            for p in f.params:
                c.add(p)
            signature, body = c.signature(shim), c.body()
        self.shims.append(signature + " {\n" + "".join(f"  {l}\n" for l in body) + "}\n")
        params = signature[signature.index("(") + 1:-1]
        self.alias("void", params, shim, manglings(f.name) + manglings(f.name + "_f08"))

    def passed_through(self, f):
        n = len(f.params)
        lengths = hidden_lengths(f)
        function = f.ret != "int"  # MPI_Wtime, MPI_Wtick, MPI_Aint_add/diff: Fortran functions
        ret = "void" if not function else f.ret
        pointers = [f"void* a{i}" for i in range(n)] + ([] if function else ["void* ierr"])
        params = pointers + [f"std::size_t l{i}" for i in range(lengths)]
        forwarded = ", ".join([f"a{i}" for i in range(n)] + ([] if function else ["ierr"]) +
                              [f"l{i}" for i in range(lengths)])
        types = ", ".join(p.split(" ")[0] for p in params)
        for suffix, target_suffix in (("", "_"), ("_f08", "_f08_")):
            target = f"p{f.name.lower()}{target_suffix}"
            shim = f"fortran{suffix}_{f.name}"
            self.declarations.append(f"{ret} {target}({types}) __attribute__((weak));")
            fail = (f"return {NS}::missing(\"{target}\", static_cast<MPI_Fint*>(ierr));"
                    if not function else f"{NS}::missing(\"{target}\", nullptr); return 0;")
            call = f"{target}({forwarded})"
            if f.name in POLL_FLAGS and not function:
                flag = [p.name for p in f.params].index(POLL_FLAGS[f.name])
                found = (f"call.polled((ierr != nullptr && *static_cast<MPI_Fint*>(ierr) != 0) "
                         f"|| *static_cast<MPI_Fint*>(a{flag}) != 0);")
                self.shims.append(
                    f"{ret} {shim}({', '.join(params)}) {{\n"
                    f"  perusetrace::PollCall call(perusetrace::Fn::{f.name});\n"
                    f"  if ({target} == nullptr) {{ {fail} }}\n"
                    f"  {call};\n  {found}\n}}\n")
            else:
                self.shims.append(
                    f"{ret} {shim}({', '.join(params)}) {{\n"
                    f"  perusetrace::Call call(perusetrace::Fn::{f.name});\n"
                    f"  if ({target} == nullptr) {{ {fail} }}\n"
                    f"  {'return ' if function else ''}{call};\n}}\n")
            self.alias(ret, ", ".join(params), shim, manglings(f.name + suffix))

    def add(self, f):
        if f.record == "plain":
            self.passed_through(f)
        else:
            self.converted(f)


HEADER = "// Generated by lib/wrappers/gen_wrappers.py from lib/wrappers/mpi.spec. DO NOT EDIT.\n"


def source(functions):
    g = Generated()
    for f in functions:
        try:
            g.add(f)
        except Unsupported as e:
            raise ValueError(f"line {f.line}: no Fortran wrapper can be generated: {e}; "
                             "teach Converted in lib/wrappers/fortran.py the parameter") from None
    return (HEADER + """// The Fortran wrappers: lib/wrappers/fortran.py says how they are made.
#include <mpi.h>

#include <cstddef>

#include "lib/fortran_args.hpp"
#include "lib/mpi_handlers.hpp"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#pragma GCC diagnostic ignored "-Wunused-parameter"

// Open MPI only (its mpi.h defines OPEN_MPI): the sentinels are its common blocks. Under another
// MPI a Fortran call must reach that MPI's own binding, which knows its MPI_IN_PLACE.
#if defined(OPEN_MPI)
extern "C" {

// The MPI's own Fortran entries (Open MPI's), where a call recorded as a call only goes on.
""" + "\n".join(g.declarations) + "\n\n" + "\n".join(g.shims) + """
// The names Fortran programs call, mpif.h's, the mpi module's and the mpi_f08 module's.
#pragma GCC visibility push(default)
""" + "\n".join(g.aliases) + """
#pragma GCC visibility pop

}  // extern "C"
#endif  // OPEN_MPI
""")
