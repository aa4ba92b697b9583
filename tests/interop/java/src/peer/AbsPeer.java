// JacORB peer of idl/abstract.idl (abstract interfaces), for
// tests/abstract_iface.rs, as cxx/abs_server.cc and cxx/abs_client.cc
// are for omniORB.
//
// usage: java peer.AbsPeer server
//          prints "HUB <ior>" and "READY", then serves until killed;
//        java peer.AbsPeer client <hub ior>
//          prints "OK <step>" per check that passed, "FAIL <step> (<what
//          came>)" otherwise, then "DONE <failures>"; exits 1 on a failure.
package peer;

import AbsInterop.*;
import java.io.Serializable;
import org.omg.CORBA.ORB;
import org.omg.PortableServer.*;

public final class AbsPeer {
  /**
   * JacORB's write_abstract_interface computes an RMI repository id for
   * every value (then ignores it for an IDL value, which writes its own
   * ids) through javax.rmi.CORBA.Util, whose default delegate needs
   * javax.transaction classes that are not on the classpath. This
   * delegate answers that question and nothing else.
   */
  public static final class RmiIds implements javax.rmi.CORBA.UtilDelegate, javax.rmi.CORBA.ValueHandler {
    public RmiIds() {}

    public javax.rmi.CORBA.ValueHandler createValueHandler() { return this; }
    public String getRMIRepositoryID(Class<?> c) { return "RMI:" + c.getName() + ":0000000000000000"; }
    public String getCodebase(Class<?> c) { return null; }
    public boolean isCustomMarshaled(Class<?> c) { return false; }
    public Serializable writeReplace(Serializable v) { return v; }

    private static UnsupportedOperationException no() { return new UnsupportedOperationException("RMI-IIOP"); }
    public java.rmi.RemoteException mapSystemException(org.omg.CORBA.SystemException e) { throw no(); }
    public void writeAny(org.omg.CORBA.portable.OutputStream o, Object v) { throw no(); }
    public Object readAny(org.omg.CORBA.portable.InputStream i) { throw no(); }
    public void writeRemoteObject(org.omg.CORBA.portable.OutputStream o, Object v) { throw no(); }
    public void writeAbstractObject(org.omg.CORBA.portable.OutputStream o, Object v) { throw no(); }
    public void registerTarget(javax.rmi.CORBA.Tie t, java.rmi.Remote r) { throw no(); }
    public void unexportObject(java.rmi.Remote r) { throw no(); }
    public javax.rmi.CORBA.Tie getTie(java.rmi.Remote r) { throw no(); }
    public Class<?> loadClass(String n, String cb, ClassLoader l) { throw no(); }
    public boolean isLocal(javax.rmi.CORBA.Stub s) { throw no(); }
    public java.rmi.RemoteException wrapException(Throwable t) { throw no(); }
    public Object copyObject(Object o, ORB orb) { throw no(); }
    public Object[] copyObjects(Object[] o, ORB orb) { throw no(); }
    public void writeValue(org.omg.CORBA.portable.OutputStream o, Serializable v) { throw no(); }
    public Serializable readValue(org.omg.CORBA.portable.InputStream i, int off, Class<?> c, String id, org.omg.SendingContext.RunTime rt) { throw no(); }
    public org.omg.SendingContext.RunTime getRunTimeCodeBase() { throw no(); }
  }

  /** The value supporting Named: its operation runs where the value is. */
  static final class LabelImpl extends Label {
    private static final long serialVersionUID = 1L;

    LabelImpl() {}

    LabelImpl(String text) {
      this.text = text;
    }

    public String name() {
      return "java label " + text;
    }
  }

  static final class LabelFactory implements org.omg.CORBA.portable.ValueFactory {
    public Serializable read_value(org.omg.CORBA_2_3.portable.InputStream in) {
      return in.read_value(new LabelImpl());
    }
  }

  static final class ThingImpl extends ThingPOA {
    public String name() { return "java thing"; }
    public int id() { return 7; }
  }

  /** "ref:<name>", "value:<name>" or "nil", calling name() on `n`. */
  static String describe(Named n) {
    if (n == null) return "nil";
    return (n instanceof org.omg.CORBA.Object ? "ref:" : "value:") + n.name();
  }

  static final class HubImpl extends HubPOA {
    private final Thing thing;

    HubImpl(Thing thing) {
      this.thing = thing;
    }

    public String inspect(Named n) { return describe(n); }
    public Named echo(Named n) { return n; }

    public Named make(int kind) {
      if (kind == 1) return thing;
      if (kind == 2) return new LabelImpl("made");
      return null;
    }
  }

  private static int failures = 0;

  static void check(boolean ok, String step, String got) {
    if (ok) {
      System.out.println("OK " + step);
    } else {
      System.out.println("FAIL " + step + " (" + got + ")");
      failures++;
    }
  }

  public static void main(String[] args) throws Exception {
    System.setProperty("javax.rmi.CORBA.UtilClass", RmiIds.class.getName());
    ORB orb = ORB.init(args, null);
    ((org.omg.CORBA_2_3.ORB) orb).register_value_factory(LabelHelper.id(), new LabelFactory());
    POA root = POAHelper.narrow(orb.resolve_initial_references("RootPOA"));
    root.the_POAManager().activate();
    Thing thing = ThingHelper.narrow(root.servant_to_reference(new ThingImpl()));
    if (args[0].equals("server")) {
      org.omg.CORBA.Object hub = root.servant_to_reference(new HubImpl(thing));
      System.out.println("HUB " + orb.object_to_string(hub));
      System.out.println("READY");
      orb.run();
      return;
    }
    Hub hub = HubHelper.narrow(orb.string_to_object(args[1]));

    // Results: a reference (name() is a call to Peregrine), a value
    // (name() runs here, on this side's LabelImpl), nil.
    Named r = hub.make(1);
    String d = describe(r);
    check(d.equals("ref:rust thing"), "make ref", d);
    Named v = hub.make(2);
    d = describe(v);
    check(d.equals("value:java label made") && ((Label) v).text.equals("made"), "make value", d);
    Named n = hub.make(0);
    check(n == null, "make nil", describe(n));

    // Arguments: Peregrine calls name() on what arrives.
    d = hub.inspect(r);
    check(d.equals("ref:rust thing"), "inspect ref", d);
    d = hub.inspect(thing);
    check(d.equals("ref:java thing"), "inspect own ref", d);
    Label sent = new LabelImpl("sent");
    d = hub.inspect(sent);
    check(d.equals("value:rust label sent"), "inspect value", d);
    d = hub.inspect(null);
    check(d.equals("nil"), "inspect nil", d);

    // Both ways through one call.
    Named e = hub.echo(sent);
    check(e instanceof Label && ((Label) e).text.equals("sent"), "echo value", describe(e));
    e = hub.echo(thing);
    d = describe(e);
    check(d.equals("ref:java thing"), "echo ref", d);
    e = hub.echo(null);
    check(e == null, "echo nil", describe(e));

    System.out.println("DONE " + failures);
    System.out.flush();
    orb.shutdown(false);
    System.exit(failures > 0 ? 1 : 0);
  }
}
