#!/usr/bin/python3
"""summary.py ARCHIVE: a short account of a perusetrace archive.

Per rank: events, time inside MPI, messages and bytes; the Peruse events seen; and what only
Peruse shows: how long receives waited in the posted queue for their message (late sender),
how long messages waited in the unexpected queue (late receiver), and how long requests sat
complete before the program waited for them (late wait). The full analysis is for
`perusetrace report`; this is the demo's quick look. Uses Debian's python3-otf2.
"""
import collections
import sys

import otf2


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: summary.py DIR/traces.otf2")
    with otf2.reader.open(sys.argv[1]) as trace:
        resolution = trace.definitions.clock_properties.timer_resolution
        ms = lambda ticks: 1000.0 * ticks / resolution
        per_rank = collections.defaultdict(lambda: {
            "events": 0, "mpi": 0, "depth": 0, "entered": 0, "sent": 0, "bytes": 0,
            "peruse": collections.Counter(), "posted": {}, "unexpected": {}, "complete": {},
            "nonblocking": set(),
            "late_sender": [], "late_receiver": [], "late_wait": []})
        for location, event in trace.events:
            r = per_rank[location.group.name]
            r["events"] += 1
            if isinstance(event, otf2.events.Enter):
                name = event.region.name
                if name.startswith("PERUSE_COMM_"):
                    peruse(r, name[12:], event)
                elif event.region.paradigm == otf2.Paradigm.MPI:
                    if r["depth"] == 0:
                        r["entered"] = event.time
                    r["depth"] += 1
            elif isinstance(event, otf2.events.Leave):
                if event.region.paradigm == otf2.Paradigm.MPI and \
                        not event.region.name.startswith("PERUSE_COMM_"):
                    r["depth"] -= 1
                    if r["depth"] == 0:
                        r["mpi"] += event.time - r["entered"]
            elif isinstance(event, (otf2.events.MpiSend, otf2.events.MpiIsend)):
                r["sent"] += 1
                r["bytes"] += event.msg_length
            if isinstance(event, (otf2.events.MpiIsend, otf2.events.MpiIrecvRequest)):
                r["nonblocking"].add(event.request_id)
            elif isinstance(event, (otf2.events.MpiIsendComplete, otf2.events.MpiIrecv)):
                # Completed inside MPI before the call that hands the completion over began.
                done = r["complete"].pop(event.request_id, None)
                if done is not None:
                    r["late_wait"].append(r["entered"] - done)
                r["nonblocking"].discard(event.request_id)
        print(f"{'rank':<12}{'events':>9}{'in MPI':>11}{'sent':>7}{'bytes':>11}  Peruse events")
        for name in sorted(per_rank, key=lambda n: int(n.split()[-1])):
            r = per_rank[name]
            top = ", ".join(f"{e} {n}" for e, n in r["peruse"].most_common(4))
            print(f"{name:<12}{r['events']:>9}{ms(r['mpi']):>9.1f}ms{r['sent']:>7}"
                  f"{r['bytes']:>11}  {top or 'none (no Peruse in this MPI, or none selected)'}")
        print()
        for label, key, what in (
                ("late sender", "late_sender", "receives waited in the posted queue"),
                ("late receiver", "late_receiver", "messages waited in the unexpected queue"),
                ("late wait", "late_wait", "requests sat complete before MPI_Wait/Test")):
            for name in sorted(per_rank, key=lambda n: int(n.split()[-1])):
                waits = [w for w in per_rank[name][key] if w > 0]
                if waits and max(waits) > resolution // 1000:  # report waits above 1 ms
                    print(f"{label:<14} {name}: {len(waits)} {what}, longest "
                          f"{ms(max(waits)):.1f} ms, total {ms(sum(waits)):.1f} ms")


def peruse(r, name, event):
    r["peruse"][name] += 1
    attrs = {a.name: v for a, v in event.attributes.items()} if event.attributes else {}
    request = attrs.get("peruse_request", 0)
    key = (attrs.get("peruse_peer"), attrs.get("peruse_tag"))
    if name == "REQ_INSERT_IN_POSTED_Q":
        r["posted"][request] = event.time
    elif name == "REQ_REMOVE_FROM_POSTED_Q" and request in r["posted"]:
        r["late_sender"].append(event.time - r["posted"].pop(request))
    elif name == "MSG_INSERT_IN_UNEX_Q":
        r["unexpected"].setdefault(key, []).append(event.time)
    elif name == "MSG_REMOVE_FROM_UNEX_Q" and r["unexpected"].get(key):
        r["late_receiver"].append(event.time - r["unexpected"][key].pop(0))
    elif name == "REQ_COMPLETE" and request in r["nonblocking"]:
        r["complete"][request] = event.time


if __name__ == "__main__":
    main()
