package JValInterop;

/**
 * The truncatable derived value only the Java side knows (Peregrine's IDL
 * has RustDerived in its place): Peregrine reads it as a Base.
 */
public class PeerDerivedImpl extends PeerDerived {
  public PeerDerivedImpl() {}

  public PeerDerivedImpl(int a, String extra, Node link) {
    this.a = a;
    this.extra = extra;
    this.link = link;
  }
}
