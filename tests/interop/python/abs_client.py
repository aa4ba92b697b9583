#!/usr/bin/env python3
"""omniORBpy client of a Peregrine AbsInterop::Hub
(tests/abstract_iface.rs): argv[1] is the IOR. Prints "OK <step>" per
check that passed, "FAIL <step> (<what came>)" otherwise, then
"DONE <failures>"; exits 1 when a step failed."""

import sys

from omniORB import CORBA

import AbsInterop
from abs_common import LabelImpl, ThingImpl, describe, register_label_factory

failures = 0


def step(name, body, want):
    """Runs `body` and checks that it returns `want`; a system exception
    is reported with its minor code."""
    global failures
    try:
        got = body()
    except CORBA.SystemException as e:
        got = "%s minor=0x%x" % (type(e).__name__, e.minor)
    except Exception as e:  # a step fails on its own, whatever went wrong
        got = "%s: %s" % (type(e).__name__, e)
    if got == want:
        print("OK " + name, flush=True)
    else:
        failures += 1
        print("FAIL %s (%s)" % (name, got), flush=True)


def label(n):
    """("value:<name>", text) of a Label, or what `n` is instead."""
    if not isinstance(n, AbsInterop.Label):
        return describe(n)
    return (describe(n), n.text)


def main():
    orb = CORBA.ORB_init(sys.argv, CORBA.ORB_ID)
    register_label_factory(orb)
    # A Thing of this side, for the Peregrine servant to call back.
    poa = orb.resolve_initial_references("RootPOA")
    mine = ThingImpl()._this()
    poa._get_the_POAManager().activate()
    hub = orb.string_to_object(sys.argv[1])._narrow(AbsInterop.Hub)

    # Results: a reference (name() is a call to Peregrine), a value
    # (name() runs here, on this side's LabelImpl), nil.
    step("make ref", lambda: describe(hub.make(1)), "ref:rust thing")
    step("make value", lambda: label(hub.make(2)), ("value:py label made", "made"))
    step("make nil", lambda: describe(hub.make(0)), "nil")

    # Arguments: Peregrine calls name() on what arrives.
    step("inspect ref", lambda: hub.inspect(hub.make(1)), "ref:rust thing")
    step("inspect own ref", lambda: hub.inspect(mine), "ref:py thing")
    step("inspect value", lambda: hub.inspect(LabelImpl("sent")), "value:rust label sent")
    step("inspect nil", lambda: hub.inspect(None), "nil")

    # Both ways through one call.
    step("echo value", lambda: label(hub.echo(LabelImpl("sent"))), ("value:py label sent", "sent"))
    step("echo ref", lambda: describe(hub.echo(mine)), "ref:py thing")
    step("echo nil", lambda: describe(hub.echo(None)), "nil")

    print("DONE %d" % failures, flush=True)
    orb.destroy()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
