// JacORB client peer: calls every operation of a (Peregrine) Interop::Echo
// and checks every result (the steps of cxx/client.cc); serves an
// Interop::Callback the server calls back.
//
// usage: java peer.Client <echo-ior> <badkey-corbaloc>
// Prints one line per step, "ok <step>" or "FAIL <step>: <why>", then
// "DONE <failures>". Exit status 0 when nothing failed, 1 otherwise, 2 on
// bad usage.
package peer;

import Interop.*;
import Interop.Record; // not java.lang.Record
import java.util.Arrays;
import org.omg.CORBA.CompletionStatus;
import org.omg.CORBA.DoubleHolder;
import org.omg.CORBA.ORB;
import org.omg.CORBA.ShortHolder;
import org.omg.CORBA.SystemException;
import org.omg.PortableServer.POA;
import org.omg.PortableServer.POAHelper;

public final class Client {
  private static int failures = 0;

  /** A failed check inside a step. */
  static final class Fail extends Exception {
    Fail(String why) { super(why); }
  }

  interface Body {
    void run() throws Exception;
  }

  static void check(boolean ok, String what) throws Fail {
    if (!ok) throw new Fail(what);
  }

  static String sysex(SystemException e) {
    String completed = e.completed == CompletionStatus.COMPLETED_YES ? "YES"
        : e.completed == CompletionStatus.COMPLETED_NO ? "NO" : "MAYBE";
    String name = e.getClass().getName().replace("org.omg.CORBA.", "");
    return name + " minor=0x" + Integer.toHexString(e.minor) + " completed=" + completed;
  }

  static void step(String name, Body body) {
    try {
      body.run();
      System.out.println("ok " + name);
    } catch (Fail f) {
      failures++;
      System.out.println("FAIL " + name + ": check " + f.getMessage());
    } catch (Mismatch m) {
      failures++;
      System.out.println("FAIL " + name + ": server says Mismatch " + m.what);
    } catch (SystemException e) {
      failures++;
      System.out.println("FAIL " + name + ": " + sysex(e));
    } catch (Exception e) {
      failures++;
      System.out.println("FAIL " + name + ": " + e);
    }
    System.out.flush();
  }

  static final class CallbackImpl extends CallbackPOA {
    private String last = "";

    public int ping(int x) { return x + 1; }
    public synchronized void note(String msg) { last = msg; }
    public synchronized String last() { return last; }

    public int take(byte[] data) throws Mismatch {
      for (int i = 0; i < data.length; i++)
        if (data[i] != (byte) (i % 251)) throw new Mismatch("take content");
      return data.length;
    }
  }

  public static void main(String[] args) {
    if (args.length < 2) {
      System.err.println("usage: peer.Client <echo-ior> <badkey-corbaloc>");
      System.exit(2);
    }
    String ior = args[0];
    String badkey = args[1];
    ORB orb = null;
    try {
      orb = ORB.init(new String[0], null);
      final ORB o = orb;
      POA root = POAHelper.narrow(orb.resolve_initial_references("RootPOA"));
      root.the_POAManager().activate();
      final Callback cb = CallbackHelper.narrow(root.servant_to_reference(new CallbackImpl()));
      final Echo[] holder = new Echo[1];
      step("narrow", () -> {
        holder[0] = EchoHelper.narrow(o.string_to_object(ior));
        check(holder[0] != null, "narrow");
      });
      final Echo echo = holder[0];
      if (echo == null) {
        System.out.println("DONE " + failures);
        System.exit(1);
      }
      run(orb, echo, cb, badkey);
    } catch (SystemException e) {
      failures++;
      System.out.println("FAIL setup: " + sysex(e));
    } catch (Exception e) {
      failures++;
      System.out.println("FAIL setup: " + e);
    }
    System.out.println("DONE " + failures);
    System.out.flush();
    // The ORB's threads are not daemons: exit rather than wait for them.
    System.exit(failures == 0 ? 0 : 1);
  }

  static void run(ORB orb, Echo echo, Callback cb, String badkey) {
    step("is_a", () -> {
      check(echo._is_a("IDL:Interop/Echo:1.0"), "is_a Echo");
      check(!echo._is_a("IDL:Other:1.0"), "!is_a Other");
    });
    step("non_existent", () -> check(!echo._non_existent(), "!non_existent"));

    step("echo_short", () -> check(echo.echo_short(Short.MIN_VALUE) == Short.MIN_VALUE, "v"));
    step("echo_ushort", () -> check(echo.echo_ushort((short) 0xffff) == (short) 0xffff, "v"));
    step("echo_long", () -> check(echo.echo_long(Integer.MIN_VALUE) == Integer.MIN_VALUE, "v"));
    step("echo_ulong", () -> check(echo.echo_ulong(0xffffffff) == 0xffffffff, "v"));
    step("echo_longlong", () -> check(echo.echo_longlong(Long.MIN_VALUE) == Long.MIN_VALUE, "v"));
    step("echo_ulonglong", () -> check(echo.echo_ulonglong(-1L) == -1L, "v"));
    step("echo_float", () -> check(echo.echo_float(-0.375f) == -0.375f, "v"));
    step("echo_double", () -> check(echo.echo_double(1e-300) == 1e-300, "v"));
    step("echo_double_inf",
        () -> check(Double.isInfinite(echo.echo_double(Double.POSITIVE_INFINITY)), "inf"));
    step("echo_boolean", () -> {
      check(echo.echo_boolean(true), "true");
      check(!echo.echo_boolean(false), "false");
    });
    step("echo_char", () -> check(echo.echo_char('q') == 'q', "v"));
    step("echo_octet", () -> check(echo.echo_octet((byte) 0xff) == (byte) 0xff, "v"));
    step("echo_string", () -> check(Expected.STR.equals(echo.echo_string(Expected.STR)), "v"));
    step("echo_string_empty", () -> check(echo.echo_string("").isEmpty(), "v"));
    step("mix", () -> {
      DoubleHolder io = new DoubleHolder(1.25);
      ShortHolder out = new ShortHolder((short) 0);
      long r = echo.mix(5, 10000000000L, io, out);
      check(r == 10000000005L, "result");
      check(io.value == 2.5, "inout");
      check(out.value == -5, "out");
    });
    step("check_prims", () -> echo.check_prims(Expected.S, Expected.US, Expected.L, Expected.UL,
        Expected.LL, Expected.ULL, Expected.F, Expected.D, Expected.B, Expected.C, Expected.O,
        Expected.STR));

    step("echo_wchar", () -> check(echo.echo_wchar(Expected.WC) == Expected.WC, "v"));
    step("echo_wstring", () -> check(Expected.WSTR.equals(echo.echo_wstring(Expected.WSTR)), "v"));
    step("echo_wstring_empty", () -> check(echo.echo_wstring("").isEmpty(), "v"));
    step("check_wide", () -> echo.check_wide(Expected.WC, Expected.WSTR));
    step("make_wstring", () -> check(Expected.WSTR.equals(echo.make_wstring()), "v"));

    step("echo_octets", () -> {
      byte[] v = new byte[300];
      for (int i = 0; i < 300; i++) v[i] = (byte) i;
      check(Arrays.equals(echo.echo_octets(v), v), "octets");
    });
    step("echo_longs", () -> {
      int[] v = new int[5];
      for (int i = 0; i < 5; i++) v[i] = i * 1000003 - 7;
      check(Arrays.equals(echo.echo_longs(v), v), "longs");
    });
    step("echo_strings", () -> {
      String[] v = {"x", "", Expected.STR};
      check(Arrays.equals(echo.echo_strings(v), v), "strings");
    });
    step("echo_doubles", () -> {
      double[] v = new double[7];
      for (int i = 0; i < 7; i++) v[i] = i / 3.0;
      check(Arrays.equals(echo.echo_doubles(v), v), "doubles");
    });
    step("echo_plains", () -> {
      Plain[] r = echo.echo_plains(new Plain[] {Expected.plain1(), Expected.plain2()});
      check(r.length == 2, "length");
      check(Values.samePlain(r[0], Expected.plain1()), "[0]");
      check(Values.samePlain(r[1], Expected.plain2()), "[1]");
    });
    step("echo_plain",
        () -> check(Values.samePlain(echo.echo_plain(Expected.plain1()), Expected.plain1()), "v"));
    step("echo_record", () -> {
      String d = Values.diffRecord(echo.echo_record(Expected.record()));
      check(d.isEmpty(), d);
    });
    step("echo_color", () -> check(echo.echo_color(Color.blue).value() == Color._blue, "v"));
    step("echo_choice_num", () -> {
      Choice c = new Choice();
      c.num(-5);
      Choice r = echo.echo_choice(c);
      check(r.discriminator() == 1 && r.num() == -5, "num");
    });
    step("echo_choice_text", () -> {
      Choice c = new Choice();
      c.text("union");
      Choice r = echo.echo_choice(c);
      check(r.discriminator() == 2 && r.text().equals("union"), "text");
    });
    step("echo_choice_pod", () -> {
      Choice c = new Choice();
      c.pod(Expected.plain2());
      Choice r = echo.echo_choice(c);
      check(r.discriminator() == 3 && Values.samePlain(r.pod(), Expected.plain2()), "pod");
    });
    step("echo_choice_default", () -> {
      Choice c = new Choice();
      c.hue(Color.red);
      Choice r = echo.echo_choice(c);
      check(r.discriminator() == c.discriminator(), "_d");
      check(r.hue().value() == Color._red, "hue");
    });
    for (int d : Expected.LABEL_DISCS) {
      step("echo_labels " + d, () -> {
        String diff = Values.diffLabels(echo.echo_labels(Values.labels(d)), d);
        check(diff.isEmpty(), diff);
      });
      step("check_labels " + d, () -> echo.check_labels(Values.labels(d), d));
      step("make_labels " + d, () -> {
        String diff = Values.diffLabels(echo.make_labels(d), d);
        check(diff.isEmpty(), diff);
      });
    }
    step("echo_matrix", () -> {
      int[][] m = Expected.grid();
      m[1][2] = -9;
      check(Arrays.deepEquals(echo.echo_matrix(m), m), "matrix");
    });
    step("echo_bytes8", () -> {
      byte[] b = new byte[8];
      for (int i = 0; i < 8; i++) b[i] = (byte) (250 + i);
      check(Arrays.equals(echo.echo_bytes8(b), b), "bytes8");
    });
    step("check_record", () -> echo.check_record(Expected.record()));
    step("check_seqs", () -> {
      Choice c = new Choice();
      c.text("union");
      echo.check_seqs(Expected.OCTETS, Expected.LONGS, Expected.STRINGS, c, Expected.grid(),
          new Plain[] {Expected.plain1(), Expected.plain2()});
    });
    step("make_record", () -> {
      String d = Values.diffRecord(echo.make_record());
      check(d.isEmpty(), d);
    });

    step("echo_self", () -> {
      Echo r = echo.echo_self(echo);
      check(r != null, "non-nil");
      check(r._is_equivalent(echo), "is_equivalent");
      check(r.echo_long(17) == 17, "call through it");
    });
    step("echo_self_nil", () -> check(echo.echo_self(null) == null, "nil"));
    step("call_back", () -> check(echo.call_back(cb, 41) == 42, "ping + 1"));
    step("call_back_big", () -> check(echo.call_back_big(cb, 1 << 20) == 1 << 20, "length"));

    step("fail_user", () -> {
      try {
        echo.fail(0, 77);
        throw new Fail("no exception");
      } catch (Oops e) {
        check(e.code == 77, "code");
        check(e.why.equals("oops"), "why");
        check(e.hue.value() == Color._blue, "hue");
        check(Arrays.equals(e.data, new int[] {1, 2, 3}), "data");
      }
    });
    step("fail_bad_param", () -> {
      try {
        echo.fail(1, 0x50470007);
        throw new Fail("no exception");
      } catch (org.omg.CORBA.BAD_PARAM e) {
        check(e.minor == 0x50470007, "minor");
        check(e.completed == CompletionStatus.COMPLETED_NO, "completed");
      }
    });
    step("fail_no_permission", () -> {
      try {
        echo.fail(2, 42);
        throw new Fail("no exception");
      } catch (org.omg.CORBA.NO_PERMISSION e) {
        check(e.minor == 42, "minor");
        check(e.completed == CompletionStatus.COMPLETED_YES, "completed");
      }
    });
    step("fail_none", () -> check(echo.fail(3, 9) == 9, "result"));
    step("bad_key", () -> {
      try {
        EchoHelper.unchecked_narrow(orb.string_to_object(badkey)).echo_long(1);
        throw new Fail("no exception");
      } catch (org.omg.CORBA.OBJECT_NOT_EXIST e) {
        // expected
      }
    });

    step("oneway", () -> {
      for (int i = 1; i <= 10; i++) echo._notify(i);
      check(echo.notified() == 55, "sum of notify");
    });

    step("big_octets", () -> {
      byte[] v = new byte[1 << 20];
      for (int i = 0; i < v.length; i++) v[i] = (byte) (i % 251);
      byte[] r = echo.big_octets(v, 1 << 20);
      check(r.length == 1 << 20, "length");
      for (int i = 0; i < r.length; i++)
        if (r[i] != (byte) (((long) i * 7) % 251)) throw new Fail("content at " + i);
    });
    step("big_doubles", () -> {
      double[] v = new double[1 << 17];
      for (int i = 0; i < v.length; i++) v[i] = i * 0.5;
      double[] r = echo.big_doubles(v, 1 << 17);
      check(r.length == 1 << 17, "length");
      for (int i = 0; i < r.length; i++)
        if (r[i] != -(i * 0.25)) throw new Fail("content at " + i);
    });
    // The connection still works after the large messages.
    step("after_big", () -> check(echo.echo_long(5) == 5, "v"));
  }
}
