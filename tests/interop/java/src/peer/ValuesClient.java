// JacORB client of a Peregrine JValInterop::Values (tests/jacorb_values.rs):
// args[0] is the IOR. Prints "ok STEP" or "FAIL STEP: why" per step and
// "DONE <failures>"; exits 1 when a step failed.
package peer;

import JValInterop.*;
import JValInterop.Values; // not peer.Values
import java.util.Arrays;
import org.omg.CORBA.ORB;

public final class ValuesClient {
  private static int failures = 0;

  interface Step {
    String run() throws Exception; // empty: passed, else why not
  }

  static void step(String name, Step s) {
    String why;
    try {
      why = s.run();
    } catch (org.omg.CORBA.SystemException e) {
      why = Client.sysex(e);
    } catch (Exception | LinkageError e) {
      e.printStackTrace();
      why = e.toString();
    }
    if (why.isEmpty()) {
      System.out.println("ok " + name);
    } else {
      failures++;
      System.out.println("FAIL " + name + ": " + why);
    }
    System.out.flush();
  }

  /** The graph both servers make: [x, y, x, null, z], y -> x, z -> z. */
  static Node[] graph() {
    Node x = new NodeImpl(3, "x", null);
    Node y = new NodeImpl(4, "y", x);
    Node z = new NodeImpl(5, "z", null);
    z.next = z;
    return new Node[] {x, y, x, null, z};
  }

  /** Empty when `r` has the shape of graph(), else what differs. */
  static String diffGraph(Node[] r) {
    if (r.length != 5) return "length " + r.length;
    if (r[0] == null || r[0].id != 3 || !r[0].label.equals("x")) return "x";
    if (r[0] != r[2]) return "x not shared";
    if (r[1] == null || r[1].id != 4 || r[1].next != r[0]) return "y -> x";
    if (r[3] != null) return "null";
    if (r[4] == null || r[4].id != 5 || r[4].next != r[4]) return "z -> z";
    return "";
  }

  public static void main(String[] args) {
    ORB orb = ORB.init(args, null);
    Values v = ValuesHelper.narrow(orb.string_to_object(args[0]));

    step("cycle", () -> {
      Node a = new NodeImpl(1, "a", null);
      Node b = new NodeImpl(2, "b", a);
      a.next = b;
      Node back = v.echo_node(a);
      if (back == a) return "not copied";
      if (back.id != 1 || !back.label.equals("a")) return "a";
      if (back.next == null || back.next.id != 2 || !back.next.label.equals("b")) return "b";
      return back.next.next == back ? "" : "cycle not closed";
    });
    step("null node", () -> v.echo_node(null) == null ? "" : "not null");
    step("sharing", () -> {
      Node x = new NodeImpl(3, "x", null);
      Node y = new NodeImpl(4, "y", x);
      Node[] r = v.echo_seq(new Node[] {x, y, x, null});
      if (r.length != 4) return "length " + r.length;
      if (r[0] != r[2]) return "x not shared";
      if (r[1].next != r[0]) return "y -> x";
      return r[3] == null && r[0].id == 3 ? "" : "values";
    });
    step("graph", () -> diffGraph(v.make_graph()));

    step("str box", () -> {
      String r = v.echo_str("boxed \u00e9");
      return "boxed \u00e9".equals(r) ? "" : "got " + r;
    });
    step("str box empty", () -> "".equals(v.echo_str("")) ? "" : "not empty");
    step("null str box", () -> v.echo_str(null) == null ? "" : "not null");
    step("point box", () -> {
      Point r = v.echo_point(new Point(3, -4, "pt"));
      return r != null && r.x == 3 && r.y == -4 && r.tag.equals("pt") ? "" : "values";
    });
    step("null point box", () -> v.echo_point(null) == null ? "" : "not null");
    step("longs box", () -> {
      int[] s = {1, -2, Integer.MIN_VALUE, 7};
      int[] r = v.echo_longs(s);
      return Arrays.equals(r, s) ? "" : "got " + Arrays.toString(r);
    });
    step("longs box empty", () -> {
      int[] r = v.echo_longs(new int[0]);
      return r != null && r.length == 0 ? "" : "values";
    });
    step("null longs box", () -> v.echo_longs(null) == null ? "" : "not null");

    // A derived value only JacORB knows, truncated to Base by Peregrine
    // (its nested Node is skipped with the derived part).
    step("truncated", () -> {
      Base d = new PeerDerivedImpl(41, "java only", new NodeImpl(6, "link", null));
      int a = v.base_a(d);
      return a == 41 ? "" : "got " + a;
    });
    // A large derived part (300 000 characters in one chunk) skipped by
    // Peregrine.
    step("truncated big", () -> {
      String big = "x".repeat(300_000);
      int a = v.base_a(new PeerDerivedImpl(3, big, null));
      return a == 3 ? "" : "got " + a;
    });
    step("null base", () -> v.base_a(null) == -1 ? "" : "not -1");
    step("base", () -> v.base_a(new BaseImpl(9)) == 9 ? "" : "not 9");
    // Peregrine's RustDerived, truncated to Base here.
    step("made derived", () -> {
      Base b = v.make_rust_derived(7);
      if (b == null) return "null";
      if (b.getClass() != BaseImpl.class) return "class " + b.getClass().getName();
      return b.a == 7 ? "" : "a " + b.a;
    });

    step("made base", () -> {
      Base b = v.make_derived(8);
      return b != null && b.getClass() == BaseImpl.class && b.a == 8 ? "" : "not a Base with a = 8";
    });

    // The derived value's link sent again after it: an indirection into
    // the part Peregrine skips when it truncates.
    step("truncated link", () -> {
      Node n = new NodeImpl(6, "link", null);
      int r = v.truncated_link(new PeerDerivedImpl(41, "java only", n), n);
      return r == 41006 ? "" : "got " + r;
    });

    step("blob echo", () -> BlobImpl.diff(v.echo_blob(BlobImpl.make(5)), 5));
    step("blob made", () -> BlobImpl.diff(v.make_blob(12), 12));
    step("null blob", () -> v.echo_blob(null) == null ? "" : "not null");
    // The Peregrine servant checks the Blob it reads: a wrong one is
    // refused.
    step("blob checked", () -> {
      BlobImpl b = BlobImpl.make(8);
      b.ratio = 0.5;
      try {
        v.echo_blob(b);
        return "accepted";
      } catch (org.omg.CORBA.BAD_PARAM e) {
        return "";
      }
    });
    // The Blob inside a chunked value.
    step("carrier sent", () -> {
      int id = v.carried(new CarrierImpl(1, BlobImpl.make(21)));
      return id == 21 ? "" : "got " + id;
    });
    step("carrier made", () -> {
      Carrier c = v.make_carrier(22);
      if (c == null) return "null";
      return c.a == 22 ? BlobImpl.diff(c.payload, 22) : "a " + c.a;
    });
    step("blob chunked", () -> ValuesClient.blobTag(orb));

    System.out.println("DONE " + failures);
    System.out.flush();
    orb.shutdown(true);
    System.exit(failures > 0 ? 1 : 0);
  }

  /**
   * How JacORB itself encodes a Blob: empty when its value tag has the
   * chunked flag (as CORBA has custom values encoded), else the tag.
   */
  static String blobTag(ORB orb) {
    org.omg.CORBA_2_3.portable.OutputStream os =
        (org.omg.CORBA_2_3.portable.OutputStream) orb.create_output_stream();
    // With its id, as the generated BlobHelper writes it (without one
    // JacORB would ask javax.rmi.CORBA.Util for an RMI id).
    os.write_value(BlobImpl.make(1), BlobHelper.id());
    int tag = os.create_input_stream().read_long();
    return (tag & 8) != 0 ? "" : "tag 0x" + Integer.toHexString(tag);
  }
}
