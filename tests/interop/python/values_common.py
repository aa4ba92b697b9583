"""What the omniORBpy value peers share (tests/omniorbpy_values.rs): the
fixed Blob (as tests/interop/src/jvalues.rs makes it) and the graph both
servers make."""

import struct

import JValInterop


def blob(id):
    """The fixed Blob numbered `id` (`jvalues::blob` in Rust)."""
    n = id % 64 + 1
    data = bytes((id + 3 * i) & 0xFF for i in range(n))
    return JValInterop.Blob(id, "blob %d \u00e9" % id, data, id / 8.0, id % 2 != 0)


def diff_blob(b, id):
    """Empty when `b` is blob(id), else the first field that differs."""
    if b is None:
        return "null"
    e = blob(id)
    for f in ("id", "name", "data", "flag"):
        if getattr(b, f) != getattr(e, f):
            return f
    if struct.pack(">d", b.ratio) != struct.pack(">d", e.ratio):
        return "ratio"
    return ""


def graph():
    """[x, y, x, None, z] with y -> x and z -> z."""
    x = JValInterop.Node(3, "x", None)
    y = JValInterop.Node(4, "y", x)
    z = JValInterop.Node(5, "z", None)
    z.next = z
    return [x, y, x, None, z]


def diff_graph(r):
    """Empty when `r` has the shape of graph(), else what differs."""
    if len(r) != 5:
        return "length %d" % len(r)
    x, y, x2, n, z = r
    if x is None or x.id != 3 or x.label != "x":
        return "x"
    if x is not x2:
        return "x not shared"
    if y is None or y.id != 4 or y.next is not x:
        return "y -> x"
    if n is not None:
        return "null"
    if z is None or z.id != 5 or z.next is not z:
        return "z -> z"
    return ""
