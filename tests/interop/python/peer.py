"""What the omniORBpy servers share: the ORB on an ephemeral loopback
port and the lines the Rust tests wait for."""

import sys

from omniORB import CORBA


def serve(label, make):
    """Starts an ORB listening on 127.0.0.1, activates the servant
    `make(orb)` returns, prints "<label> <ior>" then "READY", and serves
    until killed."""
    args = sys.argv + ["-ORBendPoint", "giop:tcp:127.0.0.1:"]
    orb = CORBA.ORB_init(args, CORBA.ORB_ID)
    poa = orb.resolve_initial_references("RootPOA")
    ref = make(orb)._this()
    poa._get_the_POAManager().activate()
    print("%s %s" % (label, orb.object_to_string(ref)), flush=True)
    print("READY", flush=True)
    orb.run()
