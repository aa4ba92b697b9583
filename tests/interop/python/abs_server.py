#!/usr/bin/env python3
"""omniORBpy server of AbsInterop::Hub (idl/abstract.idl) for the
Peregrine client (tests/abstract_iface.rs). Prints "HUB <ior>" then
"READY" and serves until killed."""

import sys

from omniORB import CORBA

import AbsInterop__POA
from abs_common import LabelImpl, ThingImpl, describe, register_label_factory


class Hub(AbsInterop__POA.Hub):
    def __init__(self, thing):
        self.thing = thing

    def inspect(self, n):
        return describe(n)

    def echo(self, n):
        return n

    def make(self, kind):
        if kind == 1:
            return self.thing
        if kind == 2:
            return LabelImpl("made")
        return None


def main():
    args = sys.argv + ["-ORBendPoint", "giop:tcp:127.0.0.1:"]
    orb = CORBA.ORB_init(args, CORBA.ORB_ID)
    register_label_factory(orb)
    poa = orb.resolve_initial_references("RootPOA")
    thing = ThingImpl()._this()
    ref = Hub(thing)._this()
    poa._get_the_POAManager().activate()
    print("HUB " + orb.object_to_string(ref), flush=True)
    print("READY", flush=True)
    orb.run()


if __name__ == "__main__":
    main()
