#!/usr/bin/python3
"""Derived datatypes and the HDTrace export, on real ranks.

    datatypes_test.py --build BUILD --mpirun MPIRUN CASE [--program PROGRAM ARGS... -np N]

CASE:
  trace      tests/apps/datatypes on 4 ranks, traced: the archive (otf2-print without a word on
             stderr, python3-otf2) holds each datatype once, unwrapped (combiner, integers,
             addresses, inner types, names), and every message, collective and file operation
             names its buffer's type, with the bytes the program knows; `perusetrace report`
             lists the same numbers per datatype, with contiguity, in text and JSON; `perusetrace
             prv` converts it; `perusetrace export --hdtrace` of it parses and matches it.
  recover    the same program killed (SIGTERM) after its first ring: `perusetrace recover` makes
             an archive whose datatypes and message types are those of the live run.
  export     `perusetrace export --hdtrace` of another program's trace (given after --program):
             every .trc and the .proj parse (xml.etree), one element per MPI call per thread,
             calls nested in annotations nested, every id resolvable in the .proj.
"""
import argparse
import glob
import json
import os
import re
import signal
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import mpi_launch  # noqa: E402

import otf2  # noqa: E402  (Debian's python3-otf2)

FAILURES = []
# A run still going after this is a hang: its stacks are printed before meson's 300 s are up.
RUN_TIMEOUT = 120


def expect(ok, what):
    if not ok:
        FAILURES.append(what)
        print("FAIL:", what)
    return ok


def run_traced(opts, work, program, args, np, env=None):
    trace = os.path.join(work, "trace")
    ranks = {"MPITRACE_OUTPUT": trace, **(env or {})}
    lib = os.path.join(opts.build, "lib", "libperusetrace.so")
    command = mpi_launch.command(opts.mpirun, np, ranks, lib) + [program] + args
    run = mpi_launch.run(command, timeout=RUN_TIMEOUT, env=mpi_launch.launcher_env(ranks),
                         cwd=work)
    sys.stdout.write(run.stdout[-2000:])
    sys.stderr.write(run.stderr[-2000:])
    if not expect(run.returncode == 0, f"the traced run exited {run.returncode}"):
        sys.exit(1)
    return trace


def tool(opts, *args):
    return subprocess.run([os.path.join(opts.build, "tools", "perusetrace")] + list(args),
                          capture_output=True, text=True, timeout=300)


def otf2_print_quiet(archive):
    printed = subprocess.run(["otf2-print", archive], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    expect(printed.returncode == 0 and not printed.stderr.strip(),
           f"otf2-print: exit {printed.returncode}, stderr {printed.stderr[:400]!r}")


# ---- the archive, read with python3-otf2 ----------------------------------------------------

DEF = re.compile(r"^MPI_Datatype (\d+) combiner=(\S+) size=(-?\d+) extent=(-?\d+) lb=(-?\d+) "
                 r"true_lb=(-?\d+) true_extent=(-?\d+) integers=(\S*) addresses=(\S*) "
                 r"types=(\S*) name=(.*)$")


def numbers(text):
    return [int(v) for v in text.split(",")] if text else []


def datatypes_of(archive):
    """id -> definition, from the archive's datatype Strings (docs/otf2-mapping.md)."""
    types = {}
    with otf2.reader.open(archive) as trace:
        for s in trace.definitions.strings:
            m = DEF.match(s.name if hasattr(s, "name") else str(s))
            if m:
                types[int(m.group(1))] = {
                    "combiner": m.group(2), "size": int(m.group(3)), "extent": int(m.group(4)),
                    "true_extent": int(m.group(7)), "integers": numbers(m.group(8)),
                    "addresses": numbers(m.group(9)), "types": numbers(m.group(10)),
                    "name": m.group(11)}
    return types


def type_id(value):
    m = DEF.match(getattr(value, "name", None) or str(value))
    return int(m.group(1)) if m else None


def uses_of(archive):
    """Per datatype id: bytes sent/received by point-to-point messages, collective bytes sent and
    received, file bytes; and the list of (rank, event kind, datatype id)."""
    uses, seen = {}, []

    def add(t, key, n):
        uses.setdefault(t, {}).setdefault(key, 0)
        uses[t][key] += n

    io_types = {}
    with otf2.reader.open(archive) as trace:
        for location, event in trace.events:
            rank = int(re.search(r"(\d+)$", location.group.name).group(1))
            attrs = {a.name: v for a, v in (event.attributes or {}).items()}
            kind = type(event).__name__
            if kind in ("MpiSend", "MpiIsend", "MpiRecv", "MpiIrecv"):
                t = type_id(attrs.get("mpi_datatype"))
                if t is not None:
                    add(t, "sent" if "send" in kind.lower() else "received", event.msg_length)
                    seen.append((rank, kind, t))
            elif kind == "MpiCollectiveEnd":
                for attr, key, n in (("mpi_send_datatype", "coll_sent", event.size_sent),
                                     ("mpi_recv_datatype", "coll_received",
                                      event.size_received)):
                    t = type_id(attrs.get(attr))
                    if t is not None:
                        add(t, key, n)
                        seen.append((rank, kind, t))
            elif kind == "IoOperationBegin":
                t = type_id(attrs.get("mpi_datatype"))
                if t is not None:
                    io_types[(rank, event.matching_id)] = t
            elif kind == "IoOperationComplete":
                t = io_types.pop((rank, event.matching_id), None)
                if t is not None:
                    add(t, "file", event.bytes_result)
                    seen.append((rank, kind, t))
    return uses, seen


def check_trace(opts, archive):
    otf2_print_quiet(archive)
    types = datatypes_of(archive)
    expect(len(types) > 0, "the archive defines no datatype")
    by_name = {}
    for i, d in types.items():
        expect(d["name"] not in by_name or not d["name"], f"datatype {d['name']!r} defined twice")
        by_name.setdefault(d["name"], i)
    # One definition per structure across the 4 ranks: no two equal definitions.
    shapes = [json.dumps({k: v for k, v in d.items()}, sort_keys=True) for d in types.values()]
    expect(len(shapes) == len(set(shapes)), "a datatype is defined more than once")

    def named(name):
        expect(name in by_name, f"no datatype named {name}")
        return by_name.get(name)

    def find(combiner, integers, inner_names):
        for i, d in types.items():
            inner = [types[t]["name"] or f"#{t}" for t in d["types"]]
            if d["combiner"] == combiner and d["integers"][:len(integers)] == integers and \
                    inner == inner_names and not d["name"]:
                return i
        expect(False, f"no {combiner} {integers} of {inner_names}")
        return None

    double, integer, flt, short = (named(n) for n in
                                   ("MPI_DOUBLE", "MPI_INT", "MPI_FLOAT", "MPI_SHORT"))
    column, real8 = named("column"), named("real8")
    if column is not None:
        d = types[column]
        expect(d["combiner"] == "VECTOR" and d["integers"] == [4, 1, 8] and
               d["types"] == [double] and d["size"] == 32 and d["extent"] == 200,
               f"column is not vector(4, 1, 8) of MPI_DOUBLE, 32 B, extent 200: {d}")
    if real8 is not None:
        d = types[real8]
        expect(d["combiner"] == "DUP" and d["types"] == [double] and d["size"] == 8,
               f"real8 is not a dup of MPI_DOUBLE: {d}")
    for n in ("MPI_DOUBLE", "MPI_INT", "MPI_FLOAT", "MPI_SHORT"):
        if by_name.get(n) is not None:
            expect(types[by_name[n]]["combiner"] == "NAMED", f"{n} is not NAMED")
    blocks = find("INDEXED", [3, 2, 1, 3, 0, 4, 8], ["MPI_INT"])
    record = find("STRUCT", [2, 1, 2], ["MPI_INT", "MPI_DOUBLE"])
    if record is not None:
        expect(types[record]["addresses"] == [0, 8] and types[record]["size"] == 20,
               f"struct's displacements or size wrong: {types[record]}")
    tile = find("SUBARRAY", [2, 8, 8, 4, 4, 2, 2], ["MPI_FLOAT"])
    spaced = find("RESIZED", [], ["MPI_INT"])
    if spaced is not None:
        expect(types[spaced]["addresses"] == [0, 16] and types[spaced]["extent"] == 16,
               f"resized's lb/extent wrong: {types[spaced]}")
    quad = find("CONTIGUOUS", [4], ["MPI_INT"])
    two_columns = find("CONTIGUOUS", [2], ["column"])  # nesting: a type of a derived type
    pairs = find("VECTOR", [2, 1, 2], ["MPI_INT"])
    triple = find("CONTIGUOUS", [3], ["MPI_SHORT"])
    strided = find("VECTOR", [2, 1, 3], ["MPI_INT"])
    two_shorts = find("CONTIGUOUS", [2], ["MPI_SHORT"])

    uses, seen = uses_of(archive)
    # What tests/apps/datatypes.c moves through each type, summed over its 4 ranks.
    expected = {
        column: {"sent": 4 * 32},
        double: {"received": 4 * 32 + 8 * 8},
        blocks: {"sent": 4 * 48, "received": 4 * 48},
        record: {"sent": 4 * 60, "received": 4 * 60},
        real8: {"sent": 40, "received": 40},
        two_columns: {"sent": 64},
        pairs: {"sent": 8},
        triple: {"sent": 6},
        short: {"received": 6},
        # the first MPI_Alltoallw's 2 ints from 3 peers on 4 ranks; the second's ints on ranks
        # 0 and 2 (its sends differ by peer: no type named for them)
        integer: {"received": 8, "file": 4 * 32, "coll_received": 4 * 3 * 8 + 2 * 3 * 4},
        strided: {"coll_sent": 4 * 3 * 8},
        two_shorts: {"coll_received": 2 * 3 * 4},
        tile: {"coll_sent": 4 * 3 * 64},
        flt: {"coll_received": 4 * 3 * 64},
        spaced: {"coll_sent": 3 * 12, "coll_received": 3 * 12},
        quad: {"file": 4 * 32},
    }
    for t, want in expected.items():
        if t is None:
            continue
        got = uses.get(t, {})
        expect(got == want, f"datatype {t} ({types[t]['name'] or types[t]['combiner']}): "
                            f"{got}, expected {want}")
    extra = set(uses) - set(expected)
    expect(not extra, f"datatypes used that the program does not use: {sorted(extra)}")
    # The freed vector's handle: the send after it names the new type, never the old one.
    expect(sum(1 for r, k, t in seen if t == pairs) == 1 and
           sum(1 for r, k, t in seen if t == triple) == 1,
           "the freed and the new type's sends are not one each")
    return types, expected


def check_report(opts, trace, types, expected):
    json_path = os.path.join(os.path.dirname(trace), "report.json")
    report = tool(opts, "report", trace, "--json", json_path, "-q")
    expect(report.returncode == 0, f"report failed: {report.stderr[-500:]}")
    expect("Datatypes:" in report.stdout and "column" in report.stdout,
           "the report's text has no datatype section naming column")
    data = json.load(open(json_path))
    rows = {d["id"]: d for d in data.get("datatypes", [])}
    expect(set(rows) == {t for t in expected if t is not None},
           f"report's datatypes {sorted(rows)} are not the used ones "
           f"{sorted(t for t in expected if t is not None)}")
    contiguous = {"MPI_DOUBLE", "MPI_INT", "MPI_FLOAT", "MPI_SHORT", "real8"}
    for t, want in expected.items():
        row = rows.get(t)
        if t is None or row is None:
            continue
        got = {"sent": row["send_bytes"], "received": row["receive_bytes"],
               "coll_sent": 0, "coll_received": 0, "file": row["file_bytes"]}
        total = sum(want.values())
        expect(row["bytes"] == total, f"report: {row['name']} moved {row['bytes']} bytes, "
                                      f"expected {total}")
        expect(row["send_bytes"] == want.get("sent", 0) and
               row["receive_bytes"] == want.get("received", 0) and
               row["collective_bytes"] == want.get("coll_sent", 0) + want.get("coll_received", 0)
               and row["file_bytes"] == want.get("file", 0),
               f"report: {row['name']} {got} / collective {row['collective_bytes']}, "
               f"expected {want}")
        d = types[t]
        should = d["name"] in contiguous or (d["combiner"] == "CONTIGUOUS" and
                                             types[d["types"][0]]["combiner"] == "NAMED")
        expect(row["contiguous"] == should,
               f"report: {row['name']} contiguous {row['contiguous']}, expected {should}")
    by_name = {r["name"]: r for r in rows.values()}
    if "column" in by_name:
        expect(by_name["column"]["sends"] == 4 and by_name["column"]["receives"] == 0,
               f"report: column {by_name['column']}")
    if "MPI_DOUBLE" in by_name:
        expect(by_name["MPI_DOUBLE"]["receives"] == 5, "report: MPI_DOUBLE not 5 receives")


# ---- the HDTrace export ---------------------------------------------------------------------

def archive_calls(archive):
    """(rank, thread) -> [MPI function names of its calls] from the archive (perusetrace names a
    rank's first location "Master thread", the others "Thread T")."""
    calls = {}
    with otf2.reader.open(archive) as trace:
        for location in trace.definitions.locations:
            rank = int(re.search(r"(\d+)$", location.group.name).group(1))
            m = re.match(r"^Thread (\d+)$", location.name)
            calls[(rank, int(m.group(1)) if m else 0)] = []
        for location, event in trace.events:
            if type(event).__name__ != "Enter" or not event.region.name.startswith("MPI_"):
                continue
            rank = int(re.search(r"(\d+)$", location.group.name).group(1))
            m = re.match(r"^Thread (\d+)$", location.name)
            calls[(rank, int(m.group(1)) if m else 0)].append(event.region.name[4:])
    return calls


def states(parent, out, depth=0, inside=False):
    """The states of a .trc (not <Nested> and not child elements such as <For>), in the order
    HDTrace wrote them: (element, depth, attributes)."""
    for e in parent:
        if e.tag == "Nested":
            states(e, out, depth + 1, True)
        elif e.tag in ("For", "Request", "Data", "Info"):
            continue
        else:
            out.append((e.tag, depth, e.attrib, [c for c in e if c.tag == "For"],
                        [c.get("request") for c in e if c.tag == "Request"]))


def check_export(opts, trace, program, want_types=None, want_nested=False):
    out = os.path.join(os.path.dirname(trace), "hdtrace")
    exported = tool(opts, "export", "--hdtrace", trace, "-o", out, "-q")
    if not expect(exported.returncode == 0 and not exported.stderr.strip(),
                  f"export failed ({exported.returncode}): {exported.stderr[-500:]}"):
        return
    projects = glob.glob(os.path.join(out, "*.proj"))
    if not expect(projects == [os.path.join(out, program + ".proj")],
                  f"expected {program}.proj, found {projects}"):
        return
    proj = ET.parse(projects[0]).getroot()
    expect(proj.tag == "Application" and proj.get("name") == program, "the .proj's root")
    levels = [l.get("type") for l in proj.iter("Level")]
    expect(levels == ["Hostname", "Rank", "Thread"], f"topology levels {levels}")
    comms = {}
    for c in proj.find("CommunicatorList"):
        for r in c.findall("Rank"):
            comms.setdefault(int(r.get("global")), set()).add(int(r.get("cid")))
            expect(int(r.get("local")) >= 0, "a negative local rank")
    files = {int(f.get("id")) for f in proj.find("FileList")}
    initial = {int(f.get("id")): f.findtext("InitialSize") for f in proj.find("FileList")}
    datatypes = {}
    for r in proj.find("Datatypes"):
        key = (int(r.get("name")), int(r.get("thread")))
        datatypes[key] = {int(t.get("id")): t for t in r}
        for t in r:  # inner types are defined in the same rank's list
            for ref in [t.get("oldType")] + [c.get("id") for c in t.findall("Type")]:
                if ref is not None:
                    expect(int(ref) in datatypes[key], f"rank {key}: type {t.get('id')} names "
                                                       f"undefined type {ref}")
    calls = archive_calls(os.path.join(trace, "traces.otf2"))
    topology = {}
    for host in proj.find("Topology").findall("Node"):
        for rank in host.findall("Node"):
            for thread in rank.findall("Node"):
                topology[(int(rank.get("name")), int(thread.get("name")))] = host.get("name")
    expect(set(topology) == set(calls), f"topology {sorted(topology)} vs archive "
                                        f"{sorted(calls)}")
    nested_seen = False
    parsed = {}
    for (rank, thread), host in topology.items():
        path = os.path.join(out, f"{program}_{host}_{rank}_{thread}.trc")
        if not expect(os.path.exists(path), f"no {path}"):
            continue
        root = ET.parse(path).getroot()
        expect(root.tag == "Program", f"{path}: root {root.tag}")
        found = []
        states(root, found)
        parsed[(rank, thread)] = (path, found)
    # A request named by a <For> was made by a call of the same rank (HDTrace's ids are a rank's).
    requests = {}
    for (rank, thread), (path, found) in parsed.items():
        for tag, depth, attrs, fors, more in found:
            if "request" in attrs:
                requests.setdefault(rank, set()).add(attrs["request"])
            requests.setdefault(rank, set()).update(more)
    for (rank, thread), (path, found) in parsed.items():
        mpi = [s for s in found if s[0] != "Annotation"]
        names = [s[2]["function"] if s[0] == "Wait" and "function" in s[2] else s[0] for s in mpi]
        want = calls[(rank, thread)]
        # HDTrace writes a state when it ends: the order is by end, the counts must agree.
        expect(sorted(names) == sorted(want),
               f"{path}: {len(names)} call elements, the archive has {len(want)} calls")
        nested_seen |= any(s[1] > 0 for s in found)
        for tag, depth, attrs, fors, _ in found:
            for a in ("time", "end"):
                expect(re.match(r"^\d+\.\d{9}$", attrs.get(a, "")), f"{path}: {tag} {a}")
            expect(float(attrs["end"]) >= float(attrs["time"]), f"{path}: {tag} ends before it "
                                                                f"starts")
            if "comm" in attrs:
                expect(int(attrs["comm"]) in comms.get(rank, ()),
                       f"{path}: {tag} comm {attrs['comm']} not rank {rank}'s in the .proj")
            if "file" in attrs:
                expect(int(attrs["file"]) in files, f"{path}: {tag} file {attrs['file']} unknown")
                if tag == "File_open":  # a file opened has its size at the first opening
                    size = initial.get(int(attrs["file"]))
                    expect(size is not None and size.isdigit(),
                           f"{path}: file {attrs['file']} opened, InitialSize {size!r}")
            if tag.startswith(("Wait", "Test")):  # a completion's type belongs to its <For>
                expect("type" not in attrs and "recvType" not in attrs,
                       f"{path}: {tag} carries a datatype of its own: {attrs}")
            for f in fors:
                expect(f.get("request") in requests.get(rank, ()),
                       f"{path}: <For request={f.get('request')}> names no request of rank {rank}")
                for a in ("type", "recvType"):
                    if a in f.attrib:
                        expect(int(f.get(a)) in datatypes.get((rank, thread), {}),
                               f"{path}: <For {a}={f.get(a)}> not in the .proj's datatypes")
            for a in ("type", "recvType"):
                if a in attrs:
                    expect(int(attrs[a]) in datatypes.get((rank, thread), {}),
                           f"{path}: {tag} {a} {attrs[a]} not in the .proj's datatypes")
        if want_types is not None:
            have = {datatypes[(rank, thread)][t].get("name")
                    for t in datatypes.get((rank, thread), {})}
            expect(want_types(rank) <= have, f"{path}: the .proj lacks {want_types(rank) - have}")
    if want_nested:
        expect(nested_seen, "no <Nested> state: annotations were not written around their calls")


def case_trace(opts, work):
    program = os.path.join(opts.build, "tests", "datatypes")
    trace = run_traced(opts, work, program, ["run", os.path.join(work, "datatypes.dat")], 4)
    archive = os.path.join(trace, "traces.otf2")
    types, expected = check_trace(opts, archive)
    check_report(opts, trace, types, expected)
    prv = tool(opts, "prv", trace, "-o", os.path.join(work, "datatypes"))
    expect(prv.returncode == 0, f"prv failed: {prv.stderr[-300:]}")
    check_export(opts, trace, "trace",
                 want_types=lambda rank: {"column", "MPI_DOUBLE"})


def case_recover(opts, work):
    program = os.path.join(opts.build, "tests", "datatypes")
    trace = os.path.join(work, "trace")
    ranks = {"MPITRACE_OUTPUT": trace}
    lib = os.path.join(opts.build, "lib", "libperusetrace.so")
    command = mpi_launch.command(opts.mpirun, 4, ranks, lib) + [program, "hang"]
    job = mpi_launch.start(command, timeout=RUN_TIMEOUT, env=mpi_launch.launcher_env(ranks),
                           cwd=work)
    pids = []
    for line in job.stdout:  # (ends early if the run hangs: the watchdog kills it)
        if line.startswith("pid "):
            pids.append(int(line.split()[1]))
            if len(pids) == 4:
                break
    for pid in pids if len(pids) == 4 else []:  # fewer: the run is over
        os.kill(pid, signal.SIGTERM)
    run = mpi_launch.finish(job)
    if not expect(run.returncode is not None, f"the run hung: {run.stderr[-1500:]}"):
        sys.exit(1)
    expect(os.path.isdir(os.path.join(trace, "journal")), "no journal left by the killed run")
    recovered = tool(opts, "recover", trace)
    expect(recovered.returncode == 0, f"recover failed: {recovered.stderr[-500:]}")
    archive = os.path.join(trace, "traces.otf2")
    otf2_print_quiet(archive)
    types = datatypes_of(archive)
    column = [i for i, d in types.items() if d["name"] == "column"]
    if expect(len(column) == 1, f"recovered archive: column defined {len(column)} times"):
        d = types[column[0]]
        expect(d["combiner"] == "VECTOR" and d["integers"] == [4, 1, 8] and
               types[d["types"][0]]["name"] == "MPI_DOUBLE", f"recovered column: {d}")
        uses, _ = uses_of(archive)
        expect(uses.get(column[0]) == {"sent": 4 * 32},
               f"recovered archive: column carried {uses.get(column[0])}, expected 128 sent")
    report = tool(opts, "report", trace, "-q")
    expect(report.returncode == 0 and "column" in report.stdout,
           "report of the recovered archive lists no column")


def case_export(opts, work):
    trace = run_traced(opts, work, opts.command[0], opts.command[1:], opts.np, dict(
        e.split("=", 1) for e in opts.env))
    check_export(opts, trace, "trace", want_nested=opts.nested)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--np", type=int, default=4)
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("--nested", action="store_true",
                        help="the program annotates: expect <Nested> states")
    parser.add_argument("case", choices=("trace", "recover", "export"))
    parser.add_argument("command", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    if opts.command[:1] == ["--"]:
        opts.command = opts.command[1:]
    work = tempfile.mkdtemp(prefix="perusetrace-datatypes-")
    {"trace": case_trace, "recover": case_recover, "export": case_export}[opts.case](opts, work)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed; the trace is in {work}")
        sys.exit(1)
    print(f"datatypes {opts.case}: all checks hold")
    shutil.rmtree(work, ignore_errors=True)  # kept only when a check failed


if __name__ == "__main__":
    main()
