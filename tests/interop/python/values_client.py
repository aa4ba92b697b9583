#!/usr/bin/env python3
"""omniORBpy client of a Peregrine JValInterop::Values
(tests/omniorbpy_values.rs): argv[1] is the IOR. Prints "ok STEP" or
"FAIL STEP: why" per step and "DONE <failures>"; exits 1 when a step
failed."""

import sys

from omniORB import CORBA

import JValInterop
from values_common import blob, diff_blob, diff_graph

failures = 0


def step(name, body):
    global failures
    try:
        why = body()
    except CORBA.SystemException as e:
        why = "%s minor=0x%x completed=%s" % (
            type(e).__name__,
            e.minor,
            {CORBA.COMPLETED_YES: "YES", CORBA.COMPLETED_NO: "NO"}.get(e.completed, "MAYBE"),
        )
    except Exception as e:  # a step fails on its own, whatever went wrong
        why = "%s: %s" % (type(e).__name__, e)
    if why:
        failures += 1
        print("FAIL %s: %s" % (name, why), flush=True)
    else:
        print("ok " + name, flush=True)


def main():
    orb = CORBA.ORB_init(sys.argv, CORBA.ORB_ID)
    v = orb.string_to_object(sys.argv[1])._narrow(JValInterop.Values)
    N = JValInterop.Node

    def cycle():
        a = N(1, "a", None)
        b = N(2, "b", a)
        a.next = b
        back = v.echo_node(a)
        if back is a:
            return "not copied"
        if (back.id, back.label, back.next.id, back.next.label) != (1, "a", 2, "b"):
            return "values"
        return "" if back.next.next is back else "cycle not closed"

    step("cycle", cycle)
    step("null node", lambda: "" if v.echo_node(None) is None else "not null")

    def sharing():
        x = N(3, "x", None)
        y = N(4, "y", x)
        r = v.echo_seq([x, y, x, None])
        if len(r) != 4:
            return "length %d" % len(r)
        if r[0] is not r[2]:
            return "x not shared"
        if r[1].next is not r[0]:
            return "y -> x"
        return "" if r[3] is None and r[0].id == 3 else "values"

    step("sharing", sharing)
    step("graph", lambda: diff_graph(v.make_graph()))

    def same(got, want):
        return "" if got == want else "got %r" % (got,)

    step("str box", lambda: same(v.echo_str("boxed \u00e9"), "boxed \u00e9"))
    step("str box empty", lambda: same(v.echo_str(""), ""))
    step("null str box", lambda: same(v.echo_str(None), None))

    def point():
        r = v.echo_point(JValInterop.Point(3, -4, "pt"))
        return same((r.x, r.y, r.tag), (3, -4, "pt"))

    step("point box", point)
    step("null point box", lambda: same(v.echo_point(None), None))
    step("longs box", lambda: same(list(v.echo_longs([1, -2, -(2**31), 7])), [1, -2, -(2**31), 7]))
    step("longs box empty", lambda: same(list(v.echo_longs([])), []))
    step("null longs box", lambda: same(v.echo_longs(None), None))

    # A derived value only this side knows, truncated to Base by Peregrine
    # (its nested Node skipped with the derived part).
    step("truncated", lambda: same(v.base_a(JValInterop.PeerDerived(41, "python only", N(6, "link", None))), 41))
    # A large derived part (300 000 characters in one chunk) skipped by
    # Peregrine.
    step("truncated big", lambda: same(v.base_a(JValInterop.PeerDerived(3, "x" * 300000, None)), 3))
    step("null base", lambda: same(v.base_a(None), -1))
    step("base", lambda: same(v.base_a(JValInterop.Base(9)), 9))

    def made_derived():
        # Peregrine's RustDerived, which this side must truncate to Base.
        b = v.make_rust_derived(7)
        return same((type(b).__name__, b.a), ("Base", 7))

    step("made derived", made_derived)
    step("made base", lambda: same((type(v.make_derived(8)).__name__, v.make_derived(8).a), ("Base", 8)))

    def truncated_link():
        # The derived value's link sent again after it: an indirection
        # into the part Peregrine skips when it truncates.
        n = N(6, "link", None)
        return same(v.truncated_link(JValInterop.PeerDerived(41, "python only", n), n), 41006)

    step("truncated link", truncated_link)

    step("blob echo", lambda: diff_blob(v.echo_blob(blob(5)), 5))
    step("blob made", lambda: diff_blob(v.make_blob(12), 12))
    step("null blob", lambda: same(v.echo_blob(None), None))
    step("carrier sent", lambda: same(v.carried(JValInterop.Carrier(1, blob(21))), 21))

    def carrier_made():
        c = v.make_carrier(22)
        return diff_blob(c.payload, 22) if c.a == 22 else "a %d" % c.a

    step("carrier made", carrier_made)

    print("DONE %d" % failures, flush=True)
    orb.destroy()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
