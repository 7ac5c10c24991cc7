#!/usr/bin/python3
"""A strict reader of Paraver traces (PREFIX.prv, PREFIX.pcf, PREFIX.row) for the tests.

    prv_check.py PREFIX        checks the three files, prints a summary, exits 1 on a problem

check(prefix, on_record=None) streams the .prv (constant memory, so it also reads the traces
of 10^7 events) and returns (failures, summary). on_record(fields) sees every record as a list
of ints, for checks of a scenario. What must hold:
- the header: "#Paraver (dd/mm/yyyy at hh:mm):END_ns:NODES(CPUS,...):1:TASKS(THREADS:NODE,...),
  COMMS", then exactly COMMS lines "c:1:ID:N:TASK...", ids unique, tasks declared;
- every record: its type's field count (state 8, event 6 + type/value pairs, communication
  15), non-negative integers, application 1, task and thread declared, CPU declared or 0;
- records sorted by time (the sixth field), END at or after every time in the body, states of
  one thread not overlapping and not ending before they begin;
- every declared thread has a record and no record names an undeclared one;
- every state value and event type in the .pcf; the .pcf's states all coloured;
- the .row: as many CPUs, nodes and threads as the header declares, threads named
  "THREAD 1.task.thread".
"""
import re
import sys

HEADER = re.compile(r"^#Paraver \((\d\d)/(\d\d)/(\d{4}) at (\d\d):(\d\d)\):(\d+)_ns:"
                    r"(\d+)\(([\d,]*)\):(\d+):(\d+)\(([\d:,]+)\),(\d+)$")
FIELDS = {1: 8, 3: 15}
MAX_FAILURES = 20


class Failures(list):
    def add(self, message):
        if len(self) < MAX_FAILURES:
            self.append(message)
        elif len(self) == MAX_FAILURES:
            self.append("... (more problems not shown)")


def parse_pcf(path, f):
    states, colours, types = set(), set(), set()
    section = None
    with open(path) as pcf:
        for number, line in enumerate(pcf, 1):
            text = line.rstrip("\n")
            if not text.strip():
                continue
            word = text.split()[0]
            if word in ("DEFAULT_OPTIONS", "DEFAULT_SEMANTIC", "STATES", "STATES_COLOR",
                        "EVENT_TYPE", "VALUES", "GRADIENT_COLOR", "GRADIENT_NAMES"):
                section = word
                continue
            parts = text.split(None, 2)
            if section == "STATES":
                if len(parts) < 2 or not parts[0].isdigit():
                    f.add(f"{path}:{number}: a state is 'VALUE LABEL', not {text!r}")
                else:
                    states.add(int(parts[0]))
            elif section == "STATES_COLOR":
                if len(parts) < 2 or not parts[0].isdigit() or \
                        not re.fullmatch(r"\{\d+,\d+,\d+\}", parts[1]):
                    f.add(f"{path}:{number}: a state colour is 'VALUE {{R,G,B}}', not {text!r}")
                else:
                    colours.add(int(parts[0]))
            elif section == "EVENT_TYPE":
                if len(parts) < 3 or not parts[0].isdigit() or not parts[1].isdigit():
                    f.add(f"{path}:{number}: an event type is 'GRADIENT TYPE LABEL', "
                          f"not {text!r}")
                else:
                    types.add(int(parts[1]))
            elif section == "VALUES":
                if len(parts) < 2 or not parts[0].isdigit():
                    f.add(f"{path}:{number}: a value is 'VALUE LABEL', not {text!r}")
    if states - colours:
        f.add(f"{path}: states without a colour: {sorted(states - colours)}")
    if not types:
        f.add(f"{path}: no EVENT_TYPE")
    return states, types


def parse_row(path, f, cpus, nodes, threads):
    levels = {}
    current = None
    with open(path) as row:
        for line in row:
            text = line.rstrip("\n")
            m = re.fullmatch(r"LEVEL (\w+) SIZE (\d+)", text)
            if m:
                current = m.group(1)
                levels[current] = (int(m.group(2)), [])
            elif text.strip() and current:
                levels[current][1].append(text)
    for level, want in (("CPU", cpus), ("NODE", nodes), ("THREAD", len(threads))):
        if level not in levels:
            f.add(f"{path}: no LEVEL {level}")
            continue
        size, names = levels[level]
        if size != want or len(names) != want:
            f.add(f"{path}: LEVEL {level} SIZE {size} with {len(names)} names; the .prv "
                  f"header declares {want}")
    if "THREAD" in levels:
        want = [f"THREAD 1.{t}.{h}" for t, h in threads]
        if levels["THREAD"][1] != want:
            f.add(f"{path}: thread names {levels['THREAD'][1][:4]}..., expected {want[:4]}...")


def pcf_types(path):
    """{event type: label} of a .pcf (its first label line under each EVENT_TYPE)."""
    types = {}
    with open(path) as pcf:
        lines = pcf.read().splitlines()
    for i, line in enumerate(lines):
        if line == "EVENT_TYPE":
            _, number, label = lines[i + 1].split(None, 2)
            types[int(number)] = label
    return types


def check(prefix, on_record=None):
    f = Failures()
    summary = {"records": 0, "states": 0, "events": 0, "comms": 0}
    prv = prefix + ".prv"
    with open(prv) as body:
        head = body.readline().rstrip("\n")
        m = HEADER.match(head)
        if not m:
            return [f"{prv}: header {head!r} is not "
                    "'#Paraver (dd/mm/yyyy at hh:mm):END_ns:NODES(CPUS):1:TASKS(...),COMMS'"], \
                summary
        end = int(m.group(6))
        nodes = int(m.group(7))
        cpu_list = [int(c) for c in m.group(8).split(",")] if m.group(8) else []
        if len(cpu_list) != nodes:
            f.add(f"{prv}: header declares {nodes} nodes but {len(cpu_list)} CPU counts")
        cpus = sum(cpu_list)
        if int(m.group(9)) != 1:
            f.add(f"{prv}: {m.group(9)} applications, perusetrace writes 1")
        ntasks = int(m.group(10))
        task_list = m.group(11).split(",")
        if len(task_list) != ntasks:
            f.add(f"{prv}: header declares {ntasks} tasks but lists {len(task_list)}")
        threads_of = {}
        for task, item in enumerate(task_list, 1):
            th, _, node = item.partition(":")
            if not th.isdigit() or not node.isdigit() or int(th) < 1 or \
                    not 1 <= int(node) <= nodes:
                f.add(f"{prv}: task {task} is {item!r}, expected THREADS:NODE with a "
                      "declared node")
                continue
            threads_of[task] = int(th)
        ncomms = int(m.group(12))
        comm_ids = set()
        for _ in range(ncomms):
            line = body.readline().rstrip("\n")
            parts = line.split(":")
            if len(parts) < 4 or parts[0] != "c" or not all(p.isdigit() for p in parts[1:]):
                f.add(f"{prv}: expected a communicator line 'c:1:ID:N:TASKS...', got {line!r}")
                continue
            appl, cid, n = int(parts[1]), int(parts[2]), int(parts[3])
            members = [int(p) for p in parts[4:]]
            if appl != 1 or n != len(members) or n == 0 or cid in comm_ids or \
                    any(not 1 <= t <= ntasks for t in members):
                f.add(f"{prv}: communicator line {line!r} is inconsistent (application 1, "
                      "N members, unique id, declared tasks)")
            comm_ids.add(cid)
        seen_threads = set()
        state_end = {}
        last_time = 0
        declared = lambda task, thread: task in threads_of and 1 <= thread <= threads_of[task]
        for number, line in enumerate(body, 2 + ncomms):
            parts = line.rstrip("\n").split(":")
            try:
                v = [int(p) for p in parts]
            except ValueError:
                f.add(f"{prv}:{number}: not a record of integers: {line.strip()!r}")
                continue
            kind = v[0]
            summary["records"] += 1
            if kind in FIELDS and len(v) != FIELDS[kind]:
                f.add(f"{prv}:{number}: record type {kind} has {len(v)} fields, not "
                      f"{FIELDS[kind]}")
                continue
            if kind == 2 and (len(v) < 8 or len(v) % 2 != 0):
                f.add(f"{prv}:{number}: an event record has {len(v)} fields; it needs "
                      "6 + type/value pairs")
                continue
            if kind not in (1, 2, 3):
                f.add(f"{prv}:{number}: unknown record type {kind}")
                continue
            if any(x < 0 for x in v):
                f.add(f"{prv}:{number}: negative field in {line.strip()!r}")
            ends = [(v[1], v[2], v[3], v[4])]
            if kind == 3:
                ends.append((v[7], v[8], v[9], v[10]))
            for cpu, appl, task, thread in ends:
                if appl != 1 or not declared(task, thread) or cpu > cpus:
                    f.add(f"{prv}:{number}: cpu {cpu} application {appl} task {task} thread "
                          f"{thread} is not declared in the header")
                else:
                    seen_threads.add((task, thread))
            time = v[5]
            if time < last_time:
                f.add(f"{prv}:{number}: time {time} before the previous record's {last_time}: "
                      "records are not sorted")
            last_time = max(last_time, time)
            times = [time]
            if kind == 1:
                summary["states"] += 1
                times.append(v[6])
                if v[6] < v[5]:
                    f.add(f"{prv}:{number}: state ends before it begins")
                key = (v[3], v[4])
                if v[5] < state_end.get(key, 0):
                    f.add(f"{prv}:{number}: state of task {v[3]} thread {v[4]} begins at {v[5]}, "
                          f"before the previous one ends ({state_end[key]})")
                state_end[key] = max(state_end.get(key, 0), v[6])
            elif kind == 2:
                summary["events"] += 1
            else:
                summary["comms"] += 1
                times += [v[6], v[11], v[12]]
            if max(times) > end:
                f.add(f"{prv}:{number}: time {max(times)} after the header's END {end}")
            if on_record:
                on_record(v)
            if kind == 2:
                summary.setdefault("_types", set()).update(v[6::2])
            elif kind == 1:
                summary.setdefault("_states", set()).add(v[7])
    all_threads = [(t, h) for t in sorted(threads_of) for h in range(1, threads_of[t] + 1)]
    missing = [x for x in all_threads if x not in seen_threads]
    if missing:
        f.add(f"{prv}: declared threads without any record (task, thread): {missing[:8]}")
    states, types = parse_pcf(prefix + ".pcf", f)
    unknown = summary.pop("_types", set()) - types
    if unknown:
        f.add(f"{prefix}.pcf: event types used in the .prv but not described: {sorted(unknown)}")
    unknown = summary.pop("_states", set()) - states
    if unknown:
        f.add(f"{prefix}.pcf: states used in the .prv but not described: {sorted(unknown)}")
    parse_row(prefix + ".row", f, cpus, nodes, all_threads)
    summary.update(end=end, tasks=ntasks, threads=len(all_threads), communicators=ncomms)
    return list(f), summary


def main():
    if len(sys.argv) != 2:
        print("usage: prv_check.py PREFIX   (checks PREFIX.prv, PREFIX.pcf, PREFIX.row)",
              file=sys.stderr)
        sys.exit(2)
    failures, summary = check(sys.argv[1])
    print(summary)
    for failure in failures:
        print("  - " + failure, file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
