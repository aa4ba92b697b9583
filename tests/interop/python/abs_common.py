"""idl/abstract.idl on the omniORBpy side (tests/abstract_iface.rs): the
value supporting `Named` (its operation runs where the value is) and its
factory, a `Thing` servant, and the text every peer prints for what a
`Named` holds."""

from omniORB import CORBA

import AbsInterop
import AbsInterop__POA


class LabelImpl(AbsInterop.Label):
    def name(self):
        return "py label " + self.text


def register_label_factory(orb):
    # The factory makes an empty value; the ORB fills in its state.
    orb.register_value_factory(AbsInterop.Label._NP_RepositoryId, lambda: LabelImpl(""))


class ThingImpl(AbsInterop__POA.Thing):
    def name(self):
        return "py thing"

    def id(self):
        return 7


def describe(n):
    """"ref:<name>", "value:<name>" or "nil", calling name() on `n`."""
    if n is None:
        return "nil"
    kind = "value" if isinstance(n, CORBA.ValueBase) else "ref"
    return "%s:%s" % (kind, n.name())
