#!/usr/bin/env python3
"""omniORBpy server of AbsInterop::Hub (idl/abstract.idl) for the
Peregrine client (tests/abstract_iface.rs). Prints "HUB <ior>" then
"READY" and serves until killed."""

import AbsInterop__POA
from abs_common import LabelImpl, ThingImpl, describe, register_label_factory
from peer import serve


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


def hub(orb):
    register_label_factory(orb)
    return Hub(ThingImpl()._this())


if __name__ == "__main__":
    serve("HUB", hub)
