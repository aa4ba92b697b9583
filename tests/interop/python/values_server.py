#!/usr/bin/env python3
"""omniORBpy server of JValInterop::Values (tests/omniorbpy_values.rs).
Prints "VALUES <ior>" then "READY" and serves until killed. What it
receives is checked too: a Blob that is not the fixed one, or a graph
whose sharing was lost, raises BAD_PARAM."""

from omniORB import CORBA

import JValInterop
import JValInterop__POA
from peer import serve
from values_common import blob, diff_blob, graph


class Values(JValInterop__POA.Values):
    def echo_node(self, n):
        if n is not None and n.next is not None and n.next.next is not None and n.next.next is not n:
            raise CORBA.BAD_PARAM(0, CORBA.COMPLETED_NO)
        return n

    def echo_seq(self, s):
        if len(s) == 4 and (s[0] is not s[2] or s[1].next is not s[0]):
            raise CORBA.BAD_PARAM(0, CORBA.COMPLETED_NO)
        return s

    def make_graph(self):
        return graph()

    def echo_str(self, b):
        return b

    def echo_point(self, b):
        return b

    def echo_longs(self, b):
        return b

    @staticmethod
    def a(b):
        """`a`, -1 for None, -2 unless it arrived as exactly a Base."""
        if b is None:
            return -1
        return b.a if type(b) is JValInterop.Base else -2

    def base_a(self, b):
        return self.a(b)

    def derived_a(self, d):
        return self.a(d)

    def make_derived(self, a):
        return JValInterop.PeerDerived(a, "python only", JValInterop.Node(a + 1, "link", None))

    def make_rust_derived(self, a):
        # Only Peregrine's server makes a RustDerived; not called here.
        return JValInterop.Base(a)

    def echo_blob(self, b):
        if b is not None and diff_blob(b, b.id):
            raise CORBA.BAD_PARAM(0, CORBA.COMPLETED_NO)
        return b

    def make_blob(self, id):
        return blob(id)

    def carried(self, c):
        if c is None or c.payload is None:
            return -1
        return c.payload.id if not diff_blob(c.payload, c.payload.id) else -2

    def make_carrier(self, id):
        return JValInterop.Carrier(id, blob(id))

    def truncated_link(self, b, n):
        if b is None or n is None:
            return -1
        return b.a * 1000 + n.id if type(b) is JValInterop.Base else -2

    def rust_truncated_link(self, b, n):
        return self.truncated_link(b, n)


if __name__ == "__main__":
    serve("VALUES", lambda orb: Values())
