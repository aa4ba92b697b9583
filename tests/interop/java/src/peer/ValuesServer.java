// JacORB server of JValInterop::Values (idl/jvalues.idl) for the Peregrine
// client (tests/jacorb_values.rs). Prints "VALUES <ior>" then "READY" and
// serves until killed. What it receives is checked here too: a Blob that
// is not the fixed one, or a graph whose sharing was lost, raises
// BAD_PARAM naming the difference.
package peer;

import JValInterop.*;
import org.omg.CORBA.BAD_PARAM;
import org.omg.CORBA.ORB;
import org.omg.PortableServer.*;

public final class ValuesServer {
  static final class ValuesImpl extends ValuesPOA {
    public Node echo_node(Node n) {
      // A cycle arrives closed: n -> next -> n is the same object.
      if (n != null && n.next != null && n.next.next != null && n.next.next != n) {
        throw new BAD_PARAM("cycle not closed");
      }
      return n;
    }

    public Node[] echo_seq(Node[] s) {
      // [x, y, x, null] with y -> x: one x.
      if (s.length == 4 && (s[0] != s[2] || s[1].next != s[0])) {
        throw new BAD_PARAM("sharing lost");
      }
      return s;
    }

    public Node[] make_graph() { return ValuesClient.graph(); }

    public String echo_str(String b) { return b; }
    public Point echo_point(Point b) { return b; }
    public int[] echo_longs(int[] b) { return b; }

    /** `a`, -1 for null, -2 unless it arrived as exactly a Base. */
    static int a(Base b) {
      if (b == null) return -1;
      return b.getClass() == BaseImpl.class ? b.a : -2;
    }

    public int base_a(Base b) { return a(b); }
    public int derived_a(Base d) { return a(d); }

    public Base make_derived(int a) {
      return new PeerDerivedImpl(a, "java only", new NodeImpl(a + 1, "link", null));
    }

    /** Only Peregrine's server makes a RustDerived; not called here. */
    public Base make_rust_derived(int a) { return new BaseImpl(a); }

    public Blob echo_blob(Blob b) {
      if (b != null) {
        String d = BlobImpl.diff(b, b.id);
        if (!d.isEmpty()) throw new BAD_PARAM("blob " + d);
      }
      return b;
    }

    public Blob make_blob(int id) { return BlobImpl.make(id); }

    public int carried(Carrier c) {
      if (c == null || c.payload == null) return -1;
      return BlobImpl.diff(c.payload, c.payload.id).isEmpty() ? c.payload.id : -2;
    }

    public Carrier make_carrier(int id) { return new CarrierImpl(id, BlobImpl.make(id)); }

    public int truncated_link(Base b, Node n) {
      if (b == null || n == null) return -1;
      return b.getClass() == BaseImpl.class ? b.a * 1000 + n.id : -2;
    }

    public int rust_truncated_link(Base b, Node n) { return truncated_link(b, n); }
  }

  public static void main(String[] args) throws Exception {
    ORB orb = ORB.init(args, null);
    POA root = POAHelper.narrow(orb.resolve_initial_references("RootPOA"));
    root.the_POAManager().activate();
    org.omg.CORBA.Object ref = root.servant_to_reference(new ValuesImpl());
    System.out.println("VALUES " + orb.object_to_string(ref));
    System.out.println("READY");
    System.out.flush();
    orb.run();
  }
}
