#!/usr/bin/env python3
"""Generate perusetrace's PMPI wrappers from lib/wrappers/mpi.spec.

    gen_wrappers.py SPEC OUTDIR            write mpi_functions.hpp/.cpp, mpi_wrappers.cpp and
                                           fortran_wrappers.cpp (lib/wrappers/fortran.py)
    gen_wrappers.py SPEC --dump            print what was parsed, one function per line
    gen_wrappers.py SPEC --check-mpi-h H   compare the spec's names with those mpi.h H declares

Each wrapper is thin: guard, PMPI call, and calls into the hand-written handlers of
lib/mpi_handlers.hpp chosen by the row's RECORD keyword. The spec format is described at the top
of mpi.spec. The generator stops, naming the line, on anything it does not understand.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fortran  # noqa: E402 (beside this file, whatever the working directory)

GROUPS = ["env", "p2p", "coll", "comm", "group", "type", "topo", "info", "err", "spawn", "rma",
          "io", "attr", "misc", "timer"]
ROLES = {
    "function": "Function", "point2point": "PointToPoint", "barrier": "Barrier",
    "coll_one2all": "CollOneToAll", "coll_all2one": "CollAllToOne",
    "coll_all2all": "CollAllToAll", "coll_other": "CollOther", "file_io": "FileIo",
    "file_io_metadata": "FileIoMetadata", "rma": "Rma",
}
# OTF2 collective operation of a collective, from its name without the MPI_ and I prefixes.
COLLECTIVE_OPS = {
    "Barrier": "Barrier", "Bcast": "Bcast", "Gather": "Gather", "Gatherv": "Gatherv",
    "Scatter": "Scatter", "Scatterv": "Scatterv", "Allgather": "Allgather",
    "Allgatherv": "Allgatherv", "Alltoall": "Alltoall", "Alltoallv": "Alltoallv",
    "Alltoallw": "Alltoallw", "Allreduce": "Allreduce", "Reduce": "Reduce",
    "Reduce_scatter": "ReduceScatter", "Reduce_scatter_block": "ReduceScatterBlock",
    "Scan": "Scan", "Exscan": "Exscan",
}
PROTOTYPE = re.compile(r"^(?P<ret>int|double|MPI_Aint)\s+(?P<name>MPI_\w+)\((?P<params>.*)\)$")
PARAM = re.compile(r"^(?P<type>.*?[\w\*])\s*(?P<name>\b\w+)\s*(?P<array>\[\s*\](\[\s*\d+\s*\])?)?$")


class SpecError(Exception):
    pass


class Param:
    def __init__(self, text, line):
        self.variadic = text.strip() == "..."
        if self.variadic:  # MPI_Pcontrol: what follows `level` cannot be passed on
            self.text, self.name, self.type, self.array = "...", "", "...", False
            return
        m = PARAM.match(text.strip())
        if not m or not m.group("type").strip() or m.group("type").strip() in ("const",):
            raise SpecError(f"line {line}: cannot read parameter '{text.strip()}' "
                            "(expected 'TYPE name', 'TYPE name[]' or 'TYPE name[][N]')")
        self.text = text.strip()
        self.name = m.group("name")
        self.type = m.group("type").strip()
        self.array = m.group("array") is not None


class Function:
    def __init__(self, fields, line):
        self.name, self.group, self.role, self.record, prototype = fields
        self.line = line
        for value, allowed, what in ((self.group, GROUPS, "GROUP"), (self.role, ROLES, "ROLE"),
                                     (self.record, RECORDS, "RECORD")):
            if value not in allowed:
                raise SpecError(f"line {line}: unknown {what} '{value}' for {self.name}; "
                                f"known: {', '.join(sorted(allowed))}")
        m = PROTOTYPE.match(prototype)
        if not m:
            raise SpecError(f"line {line}: prototype of {self.name} is not "
                            "'RET MPI_Name(TYPE name, ...)' with RET int, double or MPI_Aint")
        if m.group("name") != self.name:
            raise SpecError(f"line {line}: NAME {self.name} but the prototype declares "
                            f"{m.group('name')}")
        self.ret = m.group("ret")
        params = m.group("params").strip()
        self.params = [] if params in ("", "void") else [Param(p, line) for p in params.split(",")]
        if any(p.variadic for p in self.params[:-1]):
            raise SpecError(f"line {line}: '...' must be the last parameter of {self.name}")
        self.by_name = {p.name: p for p in self.params if not p.variadic}
        if len(self.by_name) != len([p for p in self.params if not p.variadic]):
            raise SpecError(f"line {line}: {self.name} repeats a parameter name")

    def has(self, *names):
        return all(n in self.by_name for n in names)

    def first(self, *names):
        for n in names:
            if n in self.by_name:
                return n
        return None

    def need(self, *names):
        missing = [n for n in names if n not in self.by_name]
        if missing:
            raise SpecError(f"line {self.line}: RECORD {self.record} needs parameter(s) "
                            f"{', '.join(missing)} in {self.name}")

    def out_comm(self):
        comms = [p.name for p in self.params if p.type.replace(" ", "") == "MPI_Comm*"]
        if not comms:
            raise SpecError(f"line {self.line}: RECORD comm_new needs an 'MPI_Comm *' output "
                            f"parameter in {self.name}")
        return comms[-1]

    def parent_comm(self):
        """The communicator a new one is made from (collective over it), or None."""
        comms = [p.name for p in self.params if p.type.replace(" ", "") == "MPI_Comm"]
        return comms[0] if comms else None

    def collective_op(self):
        # MPI_Ibcast is "I" + "bcast": names compare without case. OTF2 has no neighbourhood
        # operations: MPI_(I)neighbor_* stay None, not the all-to-all they resemble.
        ops = {name.lower(): op for name, op in COLLECTIVE_OPS.items()}
        base = self.name[len("MPI_"):].lower()
        if base.startswith("i") and base[1:] in ops:
            base = base[1:]
        return ops.get(base, "None")


def parse(path):
    functions, names = [], set()
    with open(path) as spec:
        for number, raw in enumerate(spec, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            fields = [f.strip() for f in line.split(" | ")]
            if len(fields) != 5:
                raise SpecError(f"line {number}: expected 5 fields separated by ' | ', got "
                                f"{len(fields)}: {line[:60]}")
            f = Function(fields, number)
            if f.name in names:
                raise SpecError(f"line {number}: {f.name} is listed twice")
            names.add(f.name)
            functions.append(f)
    if not functions:
        raise SpecError("the spec lists no function")
    return functions


def args(f):
    return ", ".join(p.name for p in f.params if not p.variadic)


def coll_args(f):
    """Brace-initialiser for perusetrace::CollArgs, from the parameters the function has."""
    def pick(*names, default):
        name = f.first(*names)
        return name if name else default
    root = pick("root", default="-1")
    count = pick("count", default="0")
    datatype = pick("datatype", default="MPI_DATATYPE_NULL")
    fields = [
        "comm", pick("sendbuf", default="nullptr"), root, count, datatype,
        pick("sendcount", default="0"), pick("sendtype", default="MPI_DATATYPE_NULL"),
        pick("recvcount", default="0"), pick("recvtype", default="MPI_DATATYPE_NULL"),
        pick("sendcounts", default="nullptr"), pick("recvcounts", default="nullptr"),
        pick("sendtypes", default="nullptr"), pick("recvtypes", default="nullptr"),
    ]
    if "comm" not in f.by_name:
        raise SpecError(f"line {f.line}: RECORD {f.record} needs a 'comm' parameter in {f.name}")
    return "perusetrace::CollArgs{" + ", ".join(fields) + "}"


# Calls that block until a message has arrived or a request completed: the thread is likely to
# wait in them, so their wrappers pack records ahead before calling the MPI (PMPI-only tracing
# has no Peruse event that says a receive found no message).
WAITING_RECORDS = {"recv", "sendrecv", "sendrecv_replace", "wait", "waitany", "waitall",
                   "waitsome", "mrecv"}


def body(f):
    """The wrapper body after the guard, as lines; the call's result is `rc`."""
    lines = BODIES[f.record](f)
    if f.record in WAITING_RECORDS:
        lines = ["perusetrace::pack_ahead(perusetrace::kPackAhead);"] + lines
    return lines


# What each RECORD keyword makes of a wrapper: the table is the list of keywords (RECORDS), so
# a keyword without a template is an unknown keyword, and a spec naming it fails the build.
# A body template returns the lines after the guard; the call's result is `rc`.
BODIES = {}


def registers_in(table):
    """A decorator that files a template under each RECORD keyword it is given."""
    def keywords(*names):
        def register(fn):
            for name in names:
                table[name] = fn
            return fn
        return register
    return keywords


template = registers_in(BODIES)


def call_of(f):
    return f"P{f.name}({args(f)})"


def around(f, after, before=()):
    """The body of a wrapper that records around the call: the lines `before`, the call keeping
    its result in rc, the statement `after` (which sees rc), then rc returned."""
    return [*before, f"const int rc = {call_of(f)};", after, "return rc;"]


IGNORED_STATUS = ["MPI_Status ignored_status;",
                  "if (status == MPI_STATUS_IGNORE) status = &ignored_status;"]


@template("plain")
def plain_body(f):
    return [f"return {call_of(f)};"]


# The RECORD keywords whose body is the same whatever the function: (the parameters it needs,
# the statement after the call, the lines before it). With no statement after, the call's
# result is returned as it is: a freed handle must be recorded before the MPI may reuse it.
FIXED = {
    "send": (("count", "datatype", "dest", "tag", "comm"), None,
             ["perusetrace::on_send(call, count, datatype, dest, tag, comm);"]),
    "request_free": (("request",), None, ["perusetrace::on_request_free(call, *request);"]),
    "type_free": (("datatype",), None, ["perusetrace::on_type_free(call, *datatype);"]),
    # later uses of the type carry its name
    "type_set_name": (("datatype",), "perusetrace::on_type_named(call, rc, datatype);", []),
    "comm_free": (("comm",), None, ["perusetrace::on_comm_free(call, *comm);"]),
    "comm_name": (("comm", "comm_name"),
                  "perusetrace::on_comm_named(call, rc, comm, comm_name);", []),
    "file_open": (("comm", "filename", "amode", "fh"),
                  "perusetrace::on_file_open(call, rc, comm, filename, amode, *fh);", []),
    "file_delete": (("filename",), "perusetrace::on_file_delete(call, rc, filename);", []),
    "file_close": (("fh",), "perusetrace::on_file_closed(call, rc, closing);",
                   ["const perusetrace::FileClosing closing = "
                    "perusetrace::on_file_closing(call, *fh);"]),
    "file_sync": (("fh",), "perusetrace::on_file_sync_end(call, fh, io);",
                  ["const std::uint64_t io = perusetrace::on_file_sync_begin(call, fh);"]),
    "file_resize": (("fh", "size"), "perusetrace::on_file_resized(call, rc, fh, size);", []),
    "win_set_name": (("win", "win_name"),
                     "perusetrace::on_win_set_name(call, rc, win, win_name);", []),
    "win_free": (("win",), "perusetrace::on_win_freed(call, rc, freed);",
                 ["perusetrace::WindowEntry* const freed = "
                  "perusetrace::on_win_free_begin(call, *win);"]),
    "win_fence": (("win",), "perusetrace::on_win_fence(call, rc, win);",
                  ["perusetrace::on_win_fence_begin(call, win);"]),
    "win_sync": (("win",), "perusetrace::on_win_sync(call, rc, win);", []),
    "win_complete": (("win",), "perusetrace::on_win_complete(call, rc, win);", []),
}


def fixed_body(f):
    needs, after, before = FIXED[f.record]
    f.need(*needs)
    if after is None:
        return before + [f"return {call_of(f)};"]
    return around(f, after, before=before)


template(*FIXED)(fixed_body)


@template("recv")
def recv_body(f):
    f.need("datatype", "source", "comm", "status")
    return IGNORED_STATUS + around(f, "perusetrace::on_recv(call, rc, datatype, comm, status);")


@template("sendrecv", "sendrecv_replace")
def sendrecv_body(f):
    plain = f.record == "sendrecv"
    send = "sendcount, sendtype" if plain else "count, datatype"
    recvtype = "recvtype" if plain else "datatype"
    f.need("dest", "sendtag", "comm", "status")
    return ([f"perusetrace::on_send(call, {send}, dest, sendtag, comm);"] + IGNORED_STATUS +
            around(f, f"perusetrace::on_recv(call, rc, {recvtype}, comm, status);"))


@template("isend", "irecv", "send_init", "recv_init")
def post_body(f):
    r = f.record
    peer = "dest" if r in ("isend", "send_init") else "source"
    f.need("count", "datatype", peer, "tag", "comm", "request")
    kind = {"isend": "Send", "irecv": "Recv", "send_init": "PersistentSend",
            "recv_init": "PersistentRecv"}[r]
    return around(f, f"perusetrace::on_post(call, rc, mark, perusetrace::RequestKind::{kind}, "
                  f"count, datatype, {peer}, tag, comm, request);",
                  before=["const std::uint64_t mark = perusetrace::activation_mark();"])


@template("start", "startall")
def start_body(f):
    n, reqs = ("1", "request") if f.record == "start" else ("count", "array_of_requests")
    f.need(reqs)
    return around(f, f"perusetrace::on_start(call, rc, {n}, {reqs});")


@template("wait", "test", "waitany", "testany")
def complete_one_body(f):
    single = f.record in ("wait", "test")
    n, reqs = ("1", "request") if single else ("count", "array_of_requests")
    f.need(reqs, "status")
    finish = f"done.one(rc, {'0' if single else '*index'}, status);"
    tested = f.record in ("test", "testany")
    if tested:  # a test that finds nothing done tests the one-sided requests unsuccessfully
        finish = f"if (*flag) {finish} else done.untested(rc);"
    return ([f"perusetrace::Completion done(call, {n}, {reqs});"] + IGNORED_STATUS +
            around(f, finish))


@template("waitall", "testall", "waitsome", "testsome")
def complete_many_body(f):
    count = f.first("count", "incount")  # the *some functions call it incount
    f.need(count or "count", "array_of_requests", "array_of_statuses")
    finish = {"waitall": "done.all(rc, array_of_statuses);",
              "testall": "if (*flag) done.all(rc, array_of_statuses); else done.untested(rc);",
              "waitsome": "done.some(rc, *outcount, array_of_indices, array_of_statuses);",
              "testsome": "done.some(rc, *outcount, array_of_indices, array_of_statuses); "
                          "done.untested(rc);"}
    return around(f, finish[f.record],
                  before=[f"perusetrace::Completion done(call, {count}, array_of_requests);",
                          "array_of_statuses = done.statuses(array_of_statuses);"])


@template("mprobe")
def mprobe_body(f):  # remember the message's communicator for MPI_Mrecv/MPI_Imrecv
    f.need("comm", "message")
    found = "*flag" if "flag" in f.by_name else "1"
    return around(f, f"if ({found}) perusetrace::on_mprobe(call, rc, comm, *message);")


@template("mrecv")
def mrecv_body(f):
    f.need("datatype", "message", "status")
    return (["const MPI_Comm comm = perusetrace::message_comm(*message);"] + IGNORED_STATUS +
            around(f, "perusetrace::on_recv(call, rc, datatype, comm, status);"))


@template("imrecv")
def imrecv_body(f):
    f.need("count", "datatype", "message", "request")
    return around(f, "perusetrace::on_post(call, rc, mark, perusetrace::RequestKind::Recv, count, "
                  "datatype, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, request);",
                  before=["const MPI_Comm comm = perusetrace::message_comm(*message);",
                          "const std::uint64_t mark = perusetrace::activation_mark();"])


@template("coll")
def collective_body(f):
    return around(f, f"perusetrace::on_collective_end(call, rc, {coll_args(f)});",
                  before=["perusetrace::on_collective_begin(call);"])


@template("icoll")
def nonblocking_collective_body(f):
    # A request here, the operation where a Wait or Test completes it (OTF2's nonblocking
    # collective events), not a collective inside the starting call.
    f.need("request")
    return around(f, f"perusetrace::on_icollective(call, rc, {coll_args(f)}, request);")


@template("comm_new")
def comm_new_body(f):
    out = f.out_comm()
    parent = f.parent_comm() or "MPI_COMM_NULL"
    return around(f, f"perusetrace::on_comm_created(call, rc, {parent}, *{out});")


@template("spawn", "spawn_multiple")
def spawn_body(f):
    # The root tells the children where their trace goes, through the infos it passes on
    # (lib/spawn.hpp); the intercommunicator then reaches their job.
    f.need("root", "comm", "intercomm")
    if f.record == "spawn":
        f.need("info")
        lines = ["perusetrace::SpawnedJob job(call, root, comm, 1, &info);",
                 "info = job.infos()[0];"]
    else:
        f.need("count", "array_of_info")
        lines = ["perusetrace::SpawnedJob job(call, root, comm, count, array_of_info);",
                 "array_of_info = job.infos();"]
    return lines + around(f, "job.done(rc, *intercomm);")


@template("file_seek")
def file_seek_body(f):
    f.need("fh", "offset", "whence")
    shared = "true" if f.name.endswith("_shared") else "false"
    return around(f, f"perusetrace::on_file_seek(call, rc, fh, offset, whence, {shared});")


@template("file_read", "file_write", "file_iread", "file_iwrite")
def file_io_body(f):
    r = f.record
    f.need("fh", "count", "datatype")
    op = "Read" if "read" in r else "Write"
    flags = []
    if "_all" in f.name or "_ordered" in f.name:
        flags.append("perusetrace::kIoCollective")
    if r in ("file_iread", "file_iwrite") or f.name.endswith("_begin"):
        flags.append("perusetrace::kIoNonBlocking")
    lines = [f"const std::uint64_t io = perusetrace::on_file_io_begin(call, fh, count, "
             f"datatype, perusetrace::IoOperation::{op}, {' | '.join(flags) or '0'});"]
    if r in ("file_iread", "file_iwrite"):
        f.need("request")
        return lines + around(f, "perusetrace::on_file_io_posted(call, rc, fh, io, request);")
    if f.name.endswith("_begin"):  # split collective: completes in the matching *_end
        return lines + around(f, "perusetrace::on_file_split_begun(call, rc, fh, io);")
    f.need("status")
    return around(f, "perusetrace::on_file_io_end(call, rc, fh, status, io);",
                  before=lines + IGNORED_STATUS)


@template("file_end")
def file_end_body(f):
    f.need("fh", "status")
    return IGNORED_STATUS + around(f, "perusetrace::on_file_split_end(call, rc, fh, status);")


# One-sided communication (lib/rma_handlers.cpp). An operation's bytes: what it sends to the
# target and what it brings back, as (count, datatype) parameters, by the name without MPI_ and
# the R of the request-based variants.
RMA_OPS = {
    "Put": ("Put", ("origin_count", "origin_datatype"), None),
    "Get": ("Get", None, ("origin_count", "origin_datatype")),
    "Accumulate": ("Accumulate", ("origin_count", "origin_datatype"), None),
    "Get_accumulate": ("GetAccumulate", ("origin_count", "origin_datatype"),
                       ("result_count", "result_datatype")),
    "Fetch_and_op": ("FetchAndOp", ("1", "datatype"), ("1", "datatype")),
    "Compare_and_swap": ("CompareAndSwap", ("1", "datatype"), ("1", "datatype")),
}


@template("rma_op")
def rma_op_body(f):
    base = f.name[len("MPI_"):]
    request_based = "request" in f.by_name
    if request_based and base.startswith("R"):
        base = base[1].upper() + base[2:]
    if base not in RMA_OPS:
        raise SpecError(f"line {f.line}: RECORD rma_op does not know {f.name}; known: "
                        f"{', '.join(sorted(RMA_OPS))} and their R variants")
    op, sent, received = RMA_OPS[base]
    f.need("target_rank", "win", *[p for pair in (sent, received) if pair for p in pair
                                   if not p.isdigit()])
    sent = sent or ("0", "MPI_DATATYPE_NULL")
    received = received or ("0", "MPI_DATATYPE_NULL")
    issue = (f"perusetrace::on_rma_op(call, perusetrace::RmaOp::{op}, win, target_rank, "
             f"{sent[0]}, {sent[1]}, {received[0]}, {received[1]}, "
             f"{'true' if request_based else 'false'})")
    if not request_based:
        return [f"(void){issue};", f"return {call_of(f)};"]
    return around(f, "perusetrace::on_rma_request(call, rc, issue, request);",
                  before=[f"const perusetrace::RmaIssue issue = {issue};"])


@template("win_create")
def win_create_body(f):
    f.need("comm", "win")
    allocates = "true" if f.name.startswith("MPI_Win_allocate") else "false"
    return around(f, f"perusetrace::on_win_created(call, rc, comm, *win, {allocates});",
                  before=["perusetrace::on_win_create_begin(call);"])


def rma_target(f):
    """The target of a passive-target call: its rank, or every rank for the *_all calls."""
    if f.name.endswith("_all"):
        return "perusetrace::kRmaAllTargets"
    f.need("rank")
    return "rank"


@template("win_lock")
def win_lock_body(f):
    f.need("win")
    target = rma_target(f)
    lock = "lock_type" if "lock_type" in f.by_name else "MPI_LOCK_SHARED"  # lock_all: shared
    return around(f, f"perusetrace::on_win_locked(call, rc, win, {target}, {lock});",
                  before=[f"perusetrace::on_win_lock(call, win, {target}, {lock});"])


@template("win_unlock")
def win_unlock_body(f):
    f.need("win")
    return around(f, f"perusetrace::on_win_unlock(call, rc, win, {rma_target(f)});")


@template("win_flush")
def win_flush_body(f):
    f.need("win")
    local = "true" if "_local" in f.name else "false"
    return around(f, f"perusetrace::on_win_flush(call, rc, win, {rma_target(f)}, {local});")


@template("win_post", "win_start")
def win_epoch_start_body(f):
    f.need("group", "win")
    exposure = "true" if f.record == "win_post" else "false"
    return around(f, f"perusetrace::on_win_epoch_start(call, rc, win, group, {exposure});")


@template("win_wait", "win_test")
def win_wait_body(f):
    f.need("win")
    done = "*flag" if f.record == "win_test" else "true"
    return around(f, f"perusetrace::on_win_wait(call, rc, win, {done});")


# Whole-wrapper templates: the calls that start and end tracing, and those recorded whatever the
# groups say. They return every line of the wrapper's body.
WHOLE = {}
whole = registers_in(WHOLE)


@whole("init", "init_thread")
def init_wrapper(f):
    provided = "*provided" if f.record == "init_thread" else "MPI_THREAD_SINGLE"
    return around(f, f"perusetrace::on_init(rc, perusetrace::Fn::{f.name}, start, {provided});",
                  before=[f"const perusetrace::InMpi in_mpi(perusetrace::Fn::{f.name});",
                          "perusetrace::before_init();",
                          "const std::uint64_t start = perusetrace::now_ticks();"])


@whole("pcontrol")
def pcontrol_wrapper(f):
    # Collection pauses and resumes whether or not the env group is traced.
    f.need("level")
    return [f"perusetrace::Call call(perusetrace::Fn::{f.name});",
            "perusetrace::on_pcontrol(level);", f"return {call_of(f)};"]


@whole("finalize")
def finalize_wrapper(f):
    return ["perusetrace::on_finalize();", f"return {call_of(f)};"]


@whole("abort")
def abort_wrapper(f):
    # The journal is saved whether or not the env group is traced: the job ends here.
    f.need("errorcode")
    return [f"perusetrace::Call call(perusetrace::Fn::{f.name});",
            "perusetrace::save_before_abort(errorcode);", f"return {call_of(f)};"]


# The tests and probes whose unsuccessful calls in a row fold into one (Call in
# lib/mpi_handlers.hpp): what says, after the call, that it found something.
POLLS = {"MPI_Test": "*flag", "MPI_Testany": "*flag", "MPI_Testall": "*flag",
         "MPI_Testsome": "*outcount != 0", "MPI_Iprobe": "*flag", "MPI_Improbe": "*flag",
         "MPI_Request_get_status": "*flag"}


def polled_body(f):
    """The body of a poll: the call's own, telling the Call what it found before returning."""
    lines = body(f)
    said = f"call.polled(rc != MPI_SUCCESS || {POLLS[f.name]});"
    if lines == [f"return {call_of(f)};"]:
        return around(f, said)
    if lines[-1] != "return rc;":
        raise SystemExit(f"{f.name}: a poll's body must end returning rc")
    return lines[:-1] + [said, "return rc;"]


def traced_wrapper(f):
    if f.name in POLLS:
        return [f"perusetrace::PollCall call(perusetrace::Fn::{f.name});",
                f"if (!call.traced()) return {call_of(f)};"] + polled_body(f)
    return [f"perusetrace::Call call(perusetrace::Fn::{f.name});",
            f"if (!call.traced()) return {call_of(f)};"] + body(f)


def always_traced_wrapper(f):
    # Peruse registration follows communicators, and the datatype registry types, even when
    # their group is not traced.
    return [f"perusetrace::Call call(perusetrace::Fn::{f.name});"] + body(f)


RECORDS = set(BODIES) | set(WHOLE)
# Communicators, windows and datatypes are followed even while their group is not traced: a
# later traced call may name them; and a spawn tells its children where to trace.
ALWAYS_TRACED = {"comm_new", "comm_free", "comm_name", "win_create", "win_free",
                 "win_set_name", "spawn", "spawn_multiple", "type_free", "type_set_name"}


def wrapper(f):
    signature = f"{f.ret} {f.name}({', '.join(p.text for p in f.params) or 'void'})"
    if f.record in WHOLE:
        lines = WHOLE[f.record](f)
    elif f.record in ALWAYS_TRACED:
        lines = always_traced_wrapper(f)
    else:
        lines = traced_wrapper(f)
    # An MPI may implement a function as a macro (Open MPI: MPI_Aint_add); it cannot be wrapped.
    return (f"#ifndef {f.name}\n" + signature + " {\n" + "".join(f"  {l}\n" for l in lines) +
            "}\n#endif\n")


HEADER = "// Generated by lib/wrappers/gen_wrappers.py from lib/wrappers/mpi.spec. DO NOT EDIT.\n"


def write_outputs(functions, outdir):
    enum = "".join(f"  {f.name},\n" for f in functions)
    groups = "".join(f"  {g},\n" for g in GROUPS)
    with open(f"{outdir}/mpi_functions.hpp", "w") as out:
        out.write(HEADER + f"""#pragma once

#include <cstdint>

#include "otf2_writer/writer.hpp"

namespace perusetrace {{

enum class Fn : std::uint16_t {{
{enum}  Count
}};

// Event groups, switched with MPITRACE_GROUPS.
enum class Group : std::uint8_t {{
{groups}  Count
}};

struct FunctionInfo {{
  const char* name;
  Group group;
  trace::RegionRole role;
  trace::CollectiveOp collective;
}};

extern const FunctionInfo kMpiFunctions[static_cast<std::size_t>(Fn::Count)];
extern const char* const kGroupNames[static_cast<std::size_t>(Group::Count)];

}}  // namespace perusetrace
""")
    rows = "".join(
        f"    {{\"{f.name}\", Group::{f.group}, trace::RegionRole::{ROLES[f.role]}, "
        f"trace::CollectiveOp::{f.collective_op()}}},\n" for f in functions)
    names = "".join(f"    \"{g}\",\n" for g in GROUPS)
    with open(f"{outdir}/mpi_functions.cpp", "w") as out:
        out.write(HEADER + f"""#include "lib/mpi_functions.hpp"

namespace perusetrace {{

const FunctionInfo kMpiFunctions[static_cast<std::size_t>(Fn::Count)] = {{
{rows}}};

const char* const kGroupNames[static_cast<std::size_t>(Group::Count)] = {{
{names}}};

}}  // namespace perusetrace
""")
    with open(f"{outdir}/mpi_wrappers.cpp", "w") as out:
        out.write(HEADER + """#include <mpi.h>

#include "lib/mpi_handlers.hpp"
#include "lib/spawn.hpp"

// Deprecated MPI functions are wrapped too: programs still call them.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
// The library's only exports (it is built with hidden visibility).
#pragma GCC visibility push(default)

extern "C" {

""")
        for f in functions:
            out.write(wrapper(f) + "\n")
        out.write("}  // extern \"C\"\n\n#pragma GCC visibility pop\n")
    with open(f"{outdir}/fortran_wrappers.cpp", "w") as out:
        out.write(fortran.source(functions))


def declared_in(mpi_h):
    text = open(mpi_h).read()
    names = set(re.findall(r"\b(MPI_[A-Z][A-Za-z0-9_]*)\s*\(", text))
    return {n for n in names if not n.startswith("MPI_T_") and not re.search(r"_(c2f|f2c)", n)
            and not n.endswith(("_function", "_fn")) and not n[4:].isupper()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("spec")
    parser.add_argument("outdir", nargs="?")
    parser.add_argument("--dump", action="store_true", help="print what was parsed")
    parser.add_argument("--check-mpi-h", metavar="MPI_H",
                        help="list spec names mpi.h lacks and mpi.h names the spec lacks")
    opts = parser.parse_args()
    try:
        functions = parse(opts.spec)
        for f in functions:  # every row must generate, even when only dumping
            wrapper(f)
        fortran.source(functions)
    except (SpecError, ValueError, OSError) as e:
        sys.exit(f"gen_wrappers.py: {opts.spec}: {e}")
    if opts.dump:
        for f in functions:
            print(f"{f.name:32} {f.group:6} {f.role:16} {f.record:16} "
                  f"{', '.join(p.name for p in f.params)}")
    if opts.check_mpi_h:
        declared = declared_in(opts.check_mpi_h)
        spec_names = {f.name for f in functions}
        unknown = sorted(spec_names - declared)
        absent = sorted(declared - spec_names)
        for name in unknown:
            print(f"in the spec, not in {opts.check_mpi_h}: {name}")
        for name in absent:
            print(f"in {opts.check_mpi_h}, not in the spec: {name}")
        if unknown:
            sys.exit(1)
    if opts.outdir:
        write_outputs(functions, opts.outdir)
    elif not (opts.dump or opts.check_mpi_h):
        parser.error("give OUTDIR, --dump or --check-mpi-h")


if __name__ == "__main__":
    main()
