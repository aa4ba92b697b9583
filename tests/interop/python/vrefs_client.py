#!/usr/bin/env python3
"""omniORBpy client of a Peregrine VRefs::Bank (tests/valuerefs.rs):
argv[1] is the IOR. Its own Account (50) travels inside the wallets it
sends, so the Peregrine servant calls back into it. Prints "OK <step>"
per check that passed, "FAIL <step> (<what came>)" otherwise, then
"DONE <failures>"; exits 1 when a step failed."""

import sys

from omniORB import CORBA

import VRefs
from vrefs_common import AccountImpl, NoteImpl, ShopImpl, describe, register_note_factory, wallet

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


def refs(w):
    """The balances read through each reference of `w`, and whether the
    nil one stayed nil."""
    return (
        w.main.balance(),
        w.obj._narrow(VRefs.Account).balance(),
        w.owner.acct.balance(),
        w.more[0].balance(),
        w.more[1] is None,
    )


def main():
    orb = CORBA.ORB_init(sys.argv, CORBA.ORB_ID)
    register_note_factory(orb)
    poa = orb.resolve_initial_references("RootPOA")
    mine = AccountImpl(50)._this()
    shop = ShopImpl()._this()
    poa._get_the_POAManager().activate()
    bank = orb.string_to_object(sys.argv[1])._narrow(VRefs.Bank)

    # Peregrine deposits through the reference this side sent.
    step("pay into", lambda: bank.pay_into(wallet("py", mine), 7), 57)

    # Back from Peregrine: every reference still designates this side's
    # account; a wallet listing itself comes back listing itself.
    def echo():
        w = wallet("py", mine)
        w.next = w
        back = bank.echo(w)
        return (back.label, back.next is back) + refs(back)

    step("echo", echo, ("py", True, 57, 57, 57, 57, True))

    # Made by Peregrine: references to its account (5), in two wallets
    # sharing one `next` value.
    def make():
        m = bank.make()
        return (m.label, m.next.label, m.next.next is m) + refs(m) + refs(m.next)

    step("make", make, ("made", "second", True, 5, 5, 5, 5, True, 5, 5, 5, 5, True))
    step("own", lambda: bank.own().balance(), 5)

    # Abstract interface members: Peregrine calls describe() on each.
    step("about ref", lambda: bank.about(wallet("a", mine, shop)), "ref:py shop")
    step("about value", lambda: bank.about(wallet("a", mine, NoteImpl("hi"))), "value:rust note hi")
    step("about nil", lambda: bank.about(wallet("a", mine)), "nil")
    step(
        "echo about",
        lambda: describe(bank.echo(wallet("a", mine, NoteImpl("back"))).about),
        "value:py note back",
    )

    # A Tagged where a Wallet is expected: Peregrine truncates it (the
    # chunks holding `extra`'s IOR skipped) and reads `main`.
    def tagged():
        t = VRefs.Tagged("t", mine, mine, VRefs.Holder("py", mine), [mine, None], None, None, mine)
        return bank.extra(t)

    step("extra truncated", tagged, -57)

    print("DONE %d" % failures, flush=True)
    orb.destroy()
    sys.exit(1 if failures else 0)


main()
