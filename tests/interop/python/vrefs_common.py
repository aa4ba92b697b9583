"""idl/valuerefs.idl on the omniORBpy side (tests/valuerefs.rs): an
Account and a Shop servant, the Note value (its operation runs where the
value is) and its factory, the wallets both peers build, and the text
every peer gives for what a Describable holds."""

from omniORB import CORBA

import VRefs
import VRefs__POA


class AccountImpl(VRefs__POA.Account):
    def __init__(self, balance):
        self.amount = balance

    def balance(self):
        return self.amount

    def deposit(self, amount):
        self.amount += amount


class ShopImpl(VRefs__POA.Shop):
    def describe(self):
        return "py shop"


class NoteImpl(VRefs.Note):
    def describe(self):
        return "py note " + self.text


def register_note_factory(orb):
    # The factory makes an empty value; the ORB fills in its state.
    orb.register_value_factory(VRefs.Note._NP_RepositoryId, lambda: NoteImpl(""))


def wallet(label, acct, about=None):
    """A wallet whose every reference member is `acct` (and a nil one in
    `more`), as `wallet` in tests/valuerefs.rs builds it."""
    return VRefs.Wallet(label, acct, acct, VRefs.Holder("py", acct), [acct, None], None, about)


def describe(d):
    """"ref:<text>", "value:<text>" or "nil", calling describe() on `d`."""
    if d is None:
        return "nil"
    kind = "value" if isinstance(d, CORBA.ValueBase) else "ref"
    return "%s:%s" % (kind, d.describe())
