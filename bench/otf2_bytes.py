#!/usr/bin/python3
"""Where an archive's bytes go: each OTF2 event file's bytes split by what they encode, computed
from the events python3-otf2 reads back and OTF2 3.0's encoding, and checked against the files'
real size (the split is trusted only when it accounts for nearly all of it).

    bench/otf2_bytes.py TRACE_DIR/traces.otf2

The encoding, as the event files show it (`xxd` of any .evt): a new timestamp is a record of
its own, a type byte and 8 bytes; an event is a type byte and its fields; an attribute list
(written before its event) and a metric are a type byte, a length byte, then their contents. A
compressed integer is a byte giving its length, then its significant bytes; 0 (and all ones)
is that one byte alone. In an attribute list each attribute is its compressed reference, a type
byte and its value (UINT8 one byte, others compressed, a definition by its reference).
"""
import collections
import os
import sys

import otf2


def compressed(value, bits):
    if value < 0:
        value &= (1 << bits) - 1
    if value == 0 or value == (1 << bits) - 1:
        return 1
    return 1 + (value.bit_length() + 7) // 8


def bits_of(otf2_type):
    name = str(otf2_type)
    return 8 if "8" in name and "128" not in name else 32 if "32" in name else 64


def attribute_list(attributes):
    size = 2 + compressed(len(attributes), 32)
    for attribute, value in attributes.items():
        size += compressed(attribute._ref, 32) + 1
        bits = bits_of(attribute.type)
        if bits == 8:
            size += 1
        elif isinstance(value, int):
            size += compressed(value, bits)
        elif isinstance(value, str):
            size += 2  # a string definition's reference (python3-otf2 gives only its text)
        else:
            size += compressed(value._ref, 32)
    return size


def event_fields(kind, e):
    if kind.startswith(("Enter", "Leave")):
        return compressed(e.region._ref, 32)
    if kind in ("MpiSend", "MpiRecv"):
        peer = e.receiver if kind == "MpiSend" else e.sender
        return (compressed(peer, 32) + compressed(e.communicator._ref, 32) +
                compressed(e.msg_tag, 32) + compressed(e.msg_length, 64))
    if kind == "Metric":
        return 1 + compressed(e.metric._ref, 32) + 1 + sum(1 + compressed(int(v), 64)
                                                          for v in e.values)
    return 8  # the few others (collectives, I/O) are counted roughly


def main():
    path = sys.argv[1]
    parts, counts = collections.Counter(), collections.Counter()
    last_time = {}
    events = 0
    with otf2.reader.open(path) as trace:
        for location, e in trace.events:
            events += 1
            kind = type(e).__name__
            if kind in ("Enter", "Leave"):
                peruse = e.region.name.startswith("PERUSE_COMM_")
                kind += " of a Peruse event" if peruse else " of an MPI call"
            counts[kind] += 1
            if last_time.get(location) != e.time:
                parts["timestamps"] += 9
            last_time[location] = e.time
            if e.attributes:
                parts[f"attributes of {kind}"] += attribute_list(e.attributes)
            parts[kind] += 1 + event_fields(kind, e)
    directory = os.path.splitext(path)[0]
    actual = sum(os.path.getsize(os.path.join(directory, f)) for f in os.listdir(directory)
                 if f.endswith(".evt"))
    total = sum(parts.values())
    print(f"{events} events, {actual} bytes of event files ({actual / events:.2f} per event); "
          f"the split below accounts for {100 * total / actual:.1f} % of them")
    print(f"{'part':40} {'bytes':>10} {'share':>7} {'per event':>10}")
    for part, size in parts.most_common():
        print(f"{part:40} {size:10} {100 * size / total:6.1f}% {size / events:10.2f}")
    for kind, n in counts.most_common():
        print(f"  {n:8} {kind}")


if __name__ == "__main__":
    main()
