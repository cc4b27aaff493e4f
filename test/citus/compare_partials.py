#!/usr/bin/env python3
"""Review of the direct partial step (shard_partials.cpp): compares a worker
fragment's output run directly (argv[1], a file) with the same fragment run
through Citus's worker_partial_agg (argv[2]). Rows are paired by their group
keys; each partial state must be equal, except that where the wrapper printed
'uninitialized' (no row of the group reached the private aggregate) the direct
step prints the empty state prepared with the call's parameters, which the
coordinator's merge adds nothing for. Prints 'same N' or 'DIFF ...'."""
import re
import sys

STATE = re.compile(r"^(v1 |q2 |s1 |uninitialized$)")


def rows(path):
    out = {}
    for line in open(path).read().splitlines():
        if not line or line == "SET":
            continue
        fields = line.split("|")
        key = tuple(f for f in fields if not STATE.match(f))
        states = [f for f in fields if STATE.match(f)]
        if not states:
            raise SystemExit(f"DIFF unexpected row (error?): {line[:200]}")
        out.setdefault(key, []).append(states)
    return out


def empty(state):
    if state.startswith("v1 "):
        return " count=0 " in state and " sum=0 " in state
    if state.startswith("q2 "):
        return state.endswith("points=")
    if state.startswith("s1 "):
        scores = re.search(r" scores=([0-9,]*) ", state)
        return scores is not None and set(scores.group(1).split(",")) <= {"0"}
    return False


direct, wrapped = rows(sys.argv[1]), rows(sys.argv[2])
if direct.keys() != wrapped.keys():
    raise SystemExit(f"DIFF group keys {sorted(direct)[:5]} vs {sorted(wrapped)[:5]}")
for key in direct:
    a, b = direct[key], wrapped[key]
    if len(a) != len(b):
        raise SystemExit(f"DIFF rows of group {key}")
    for ra, rb in zip(a, b):
        for sa, sb in zip(ra, rb):
            if sa != sb and not (sb == "uninitialized" and empty(sa)):
                raise SystemExit(f"DIFF group {key}: direct {sa[:160]} wrapper {sb[:160]}")
print(f"same {len(direct)}")
