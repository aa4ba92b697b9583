package JValInterop;

/** See NodeImpl. */
public class CarrierImpl extends Carrier {
  public CarrierImpl() {}

  public CarrierImpl(int a, Blob blob) {
    this.a = a;
    this.payload = blob;
  }
}
