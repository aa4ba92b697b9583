"""omniORBpy server of `idl/contexts.idl`: answers what context
properties a call carried (omniORBpy hands the servant a CORBA.Context;
`get_values("*")` gives the name -> value dict in arrival order)."""

import CtxInterop__POA
from omniORB import CORBA
from peer import serve


class Props(CtxInterop__POA.Props):
    def seen(self, tag, ctx):
        try:
            values = ctx.get_values("*")
        except CORBA.BAD_CONTEXT:
            # get_values finding nothing raises: no property arrived.
            values = {}
        return [str(tag)] + ["%s=%s" % (n, v) for n, v in values.items()]


if __name__ == "__main__":
    serve("PROPS", lambda orb: Props())
