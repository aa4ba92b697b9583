#!/usr/bin/env python3
"""omniORBpy server of VRefs::Bank (tests/valuerefs.rs). Prints
"BANK <ior>" then "READY" and serves until killed. Its own account holds
5; the wallets it receives are used through their references."""

import VRefs
import VRefs__POA
from peer import serve
from vrefs_common import AccountImpl, describe, register_note_factory, wallet


class Bank(VRefs__POA.Bank):
    def __init__(self, orb):
        register_note_factory(orb)
        self.acct = AccountImpl(5)._this()

    def pay_into(self, purse, amount):
        purse.main.deposit(amount)
        return purse.owner.acct.balance()

    def echo(self, purse):
        return purse

    def make(self):
        # Two wallets listing each other: a cycle through values that
        # hold references.
        first = wallet("made", self.acct)
        second = wallet("second", self.acct)
        first.next = second
        second.next = first
        return first

    def own(self):
        return self.acct

    def about(self, purse):
        return describe(purse.about)

    def extra(self, purse):
        if isinstance(purse, VRefs.Tagged):
            return purse.extra.balance()
        return -purse.main.balance()


serve("BANK", Bank)
