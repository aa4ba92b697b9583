#!/usr/bin/env python3
"""Checks the code-size targets on `ttcp footprint --json` output (stdin).

Code size is deterministic for a given toolchain, so unlike the speed
targets it can be checked on every run: the ORB's text (the cdr, giop
and orb crates, per-operation instances of their generic code included)
within 600 KB, and every interpreted stub with its table within half of
the compiled stub (BENCHMARKS.md, T6). Prints the figures; exits 1 with
the figure that broke its target.
"""
import json
import sys

ORB_TEXT_MAX = 600 * 1000
STUB_RATIO_MAX = 0.50

recs = [json.loads(l) for l in sys.stdin if l.strip()]
size = {(r.get("marshal"), r["item"]): r["bytes"] for r in recs if r.get("suite") == "footprint"}
failed = []
orb = size.get((None, "text cdr+giop+orb"))
if orb is None:
    sys.exit("no 'text cdr+giop+orb' figure in the footprint output")
print(f"ORB text (cdr+giop+orb): {orb} bytes (target <= {ORB_TEXT_MAX})")
if orb > ORB_TEXT_MAX:
    failed.append(f"ORB text {orb} bytes > {ORB_TEXT_MAX}")
ops = sorted({item[: -len(" stub+table")] for (m, item) in size if item.endswith(" stub+table")})
if not ops:
    sys.exit("no stub+table figures in the footprint output")
for op in ops:
    comp = size.get(("compiled", f"{op} stub+table"))
    interp = size.get(("interpreted", f"{op} stub+table"))
    if not comp or interp is None:
        sys.exit(f"{op}: the footprint output lacks its compiled or interpreted stub+table")
    ratio = interp / comp
    print(f"{op}: interpreted stub+table {interp} / compiled {comp} = {ratio:.3f} (target <= {STUB_RATIO_MAX})")
    if ratio > STUB_RATIO_MAX:
        failed.append(f"{op}: interpreted/compiled stub+table {ratio:.3f} > {STUB_RATIO_MAX}")
if failed:
    print("code-size targets broken:", *failed, sep="\n  ")
    sys.exit(1)
