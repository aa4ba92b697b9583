// JacORB server peer: implements Interop::Echo (as cxx/server.cc does for
// omniORB) and checks everything it receives, raising Interop::Mismatch on
// a difference. Expected values come from Expected.java, which the test
// harness generates from src/expected.rs.
//
// usage: java peer.Server (JacORB settings as -D system properties)
// Prints "ECHO <ior>", "KEY <name>" (an object key bound with JacORB's
// addObjectKey, for corbaloc) and "READY" on stdout, then serves until
// Echo::shutdown() or until killed.
//
// Unlike cxx/server.cc there is no forwarding POA: JacORB 3.9 fails on a
// ForwardRequest raised by a servant locator or a servant activator for a
// remote request (its RequestProcessor thread dies with BAD_PARAM in
// ORB.set_delegate and the request is never answered, for its own
// clients too).
package peer;

import Interop.*;
import Interop.Record; // not java.lang.Record
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.omg.CORBA.DoubleHolder;
import org.omg.CORBA.ORB;
import org.omg.CORBA.ShortHolder;
import org.omg.PortableServer.*;

public final class Server {
  private static ORB orb;

  static void check(boolean ok, String what) throws Mismatch {
    if (!ok) {
      System.err.println("server: mismatch: " + what);
      throw new Mismatch(what);
    }
  }

  static final class EchoImpl extends EchoPOA {
    private final AtomicInteger sum = new AtomicInteger();

    public short echo_short(short v) { return v; }
    public short echo_ushort(short v) { return v; }
    public int echo_long(int v) { return v; }
    public int echo_ulong(int v) { return v; }
    public long echo_longlong(long v) { return v; }
    public long echo_ulonglong(long v) { return v; }
    public float echo_float(float v) { return v; }
    public double echo_double(double v) { return v; }
    public boolean echo_boolean(boolean v) { return v; }
    public char echo_char(char v) { return v; }
    public char echo_wchar(char v) { return v; }
    public byte echo_octet(byte v) { return v; }
    public String echo_string(String v) { return v; }
    public String echo_wstring(String v) { return v; }

    public long mix(int a, long b, DoubleHolder io, ShortHolder o) {
      io.value *= 2;
      o.value = (short) -a;
      return a + b;
    }

    public byte[] echo_octets(byte[] v) { return v; }
    public int[] echo_longs(int[] v) { return v; }
    public String[] echo_strings(String[] v) { return v; }
    public double[] echo_doubles(double[] v) { return v; }
    public Plain[] echo_plains(Plain[] v) { return v; }
    public Plain echo_plain(Plain v) { return v; }
    public Record echo_record(Record v) { return v; }
    public Color echo_color(Color v) { return v; }
    public Choice echo_choice(Choice v) { return v; }
    public Labels echo_labels(Labels v) { return v; }
    public int[][] echo_matrix(int[][] v) { return v; }
    public byte[] echo_bytes8(byte[] v) { return v; }

    public void check_prims(short s, short us, int l, int ul, long ll, long ull, float f,
        double d, boolean b, char c, byte o, String str) throws Mismatch {
      check(s == Expected.S, "short");
      check(us == Expected.US, "unsigned short");
      check(l == Expected.L, "long");
      check(ul == Expected.UL, "unsigned long");
      check(ll == Expected.LL, "long long");
      check(ull == Expected.ULL, "unsigned long long");
      check(f == Expected.F, "float");
      check(d == Expected.D, "double");
      check(b == Expected.B, "boolean");
      check(c == Expected.C, "char");
      check(o == Expected.O, "octet");
      check(Expected.STR.equals(str), "string");
    }

    public void check_wide(char wc, String ws) throws Mismatch {
      check(wc == Expected.WC, "wchar");
      check(Expected.WSTR.equals(ws), "wstring");
    }

    public void check_record(Record v) throws Mismatch {
      String d = Values.diffRecord(v);
      check(d.isEmpty(), "record." + d);
    }

    public void check_seqs(byte[] o, int[] l, String[] s, Choice c, int[][] m, Plain[] p)
        throws Mismatch {
      check(Arrays.equals(o, Expected.OCTETS), "octets");
      check(Arrays.equals(l, Expected.LONGS), "longs");
      check(Arrays.equals(s, Expected.STRINGS), "strings");
      check(c.discriminator() == 2 && "union".equals(c.text()), "choice");
      check(Arrays.deepEquals(m, Expected.grid()), "matrix");
      check(p.length == 2 && Values.samePlain(p[0], Expected.plain1())
          && Values.samePlain(p[1], Expected.plain2()), "plains");
    }

    public void check_labels(Labels v, int d) throws Mismatch {
      String diff = Values.diffLabels(v, d);
      check(diff.isEmpty(), diff);
    }

    public Labels make_labels(int d) { return Values.labels(d); }
    public Record make_record() { return Expected.record(); }
    public String make_wstring() { return Expected.WSTR; }

    public Echo echo_self(Echo other) { return other; }

    public int call_back(Callback cb, int x) throws Mismatch {
      check(cb != null, "nil callback");
      int r = cb.ping(x);
      cb.note("from JacORB");
      String last = cb.last();
      check("from JacORB".equals(last), "callback last()");
      return r;
    }

    public int call_back_big(Callback cb, int n) throws Mismatch {
      check(cb != null, "nil callback");
      byte[] data = new byte[n];
      for (int i = 0; i < n; i++) data[i] = (byte) (i % 251);
      return cb.take(data);
    }

    public int fail(int how, int code) throws Oops {
      switch (how) {
        case 0:
          throw new Oops(code, "oops", Color.blue, new int[] {1, 2, 3});
        case 1:
          throw new org.omg.CORBA.BAD_PARAM(code, org.omg.CORBA.CompletionStatus.COMPLETED_NO);
        case 2:
          throw new org.omg.CORBA.NO_PERMISSION(code,
              org.omg.CORBA.CompletionStatus.COMPLETED_YES);
        default:
          return code;
      }
    }

    public void _notify(int v) { sum.addAndGet(v); }
    public int notified() { return sum.get(); }

    public byte[] big_octets(byte[] v, int n) throws Mismatch {
      for (int i = 0; i < v.length; i++) check(v[i] == (byte) (i % 251), "big_octets content");
      byte[] r = new byte[n];
      for (int i = 0; i < n; i++) r[i] = (byte) (((long) i * 7) % 251);
      return r;
    }

    public double[] big_doubles(double[] v, int n) throws Mismatch {
      for (int i = 0; i < v.length; i++) check(v[i] == i * 0.5, "big_doubles content");
      double[] r = new double[n];
      for (int i = 0; i < n; i++) r[i] = -(i * 0.25);
      return r;
    }

    public void shutdown() {
      // Not waiting: this runs on one of the ORB's own request threads.
      orb.shutdown(false);
    }
  }

  public static void main(String[] args) throws Exception {
    orb = ORB.init(args, null);
    POA root = POAHelper.narrow(orb.resolve_initial_references("RootPOA"));
    POAManager mgr = root.the_POAManager();
    org.omg.CORBA.Object echo = root.servant_to_reference(new EchoImpl());

    // JacORB's counterpart of omniORB's INS POA: corbaloc::host:port/InteropEcho.
    ((org.jacorb.orb.ORB) orb).addObjectKey("InteropEcho", echo);

    mgr.activate();
    System.out.println("ECHO " + orb.object_to_string(echo));
    System.out.println("KEY InteropEcho");
    System.out.println("READY");
    System.out.flush();
    orb.run();
    orb.destroy();
  }
}
