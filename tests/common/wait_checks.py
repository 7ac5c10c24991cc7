"""Checks on the wait states of a `perusetrace report --json` (docs/report.md, "Wait states"),
shared by every test that writes a report."""


def invariant(data):
    """The time lost adds up: per rank, the leaf patterns summed are the rank's waiting and at
    most its time in MPI calls; per pattern and MPI function, at most the time all ranks spent
    in that function; a pattern's ranks add up to its total. Returns the failures."""
    w = data.get("wait_states")
    if w is None:
        return []
    f = []
    ranks = data["ranks"]
    patterns = w["patterns"]
    for r, rank in enumerate(ranks):
        leaves = sum(p["ranks_ns"][r] for p in patterns.values())
        if leaves != w["ranks_ns"][r]:
            f.append(f"rank {r}: its patterns add up to {leaves} ns, its waiting says "
                     f"{w['ranks_ns'][r]} ns")
        if leaves > rank["mpi_ns"]:
            f.append(f"rank {r}: {leaves} ns lost waiting, more than its {rank['mpi_ns']} ns in "
                     f"MPI calls")
    in_function = {}
    for rank in ranks:
        for fn in rank["functions"]:
            in_function[fn["name"]] = in_function.get(fn["name"], 0) + fn["ns"]
    for key, p in patterns.items():
        if sum(p["ranks_ns"]) != p["total_ns"]:
            f.append(f"{key}: its ranks add up to {sum(p['ranks_ns'])} ns, its total is "
                     f"{p['total_ns']} ns")
        for fn in p["functions"]:
            if fn["ns"] > in_function.get(fn["name"], 0):
                f.append(f"{key}: {fn['ns']} ns lost in {fn['name']}, which all ranks spent "
                         f"{in_function.get(fn['name'], 0)} ns in")
        caused = sum(c["ns"] for c in p["causes"]) + p["uncaused_ns"]
        # Causes are shares of the waits, rounded down each: they may fall short by a ns a share.
        if caused > p["total_ns"] or p["total_ns"] - caused > 16 * max(1, p["count"]):
            f.append(f"{key}: causes {caused} ns (with {p['uncaused_ns']} ns uncaused) for "
                     f"{p['total_ns']} ns lost")
    total = sum(w["ranks_ns"])
    if total != w["total_ns"]:
        f.append(f"the ranks' waiting adds up to {total} ns, the total says {w['total_ns']} ns")
    return f
