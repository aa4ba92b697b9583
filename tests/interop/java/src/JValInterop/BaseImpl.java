package JValInterop;

/** See NodeImpl. */
public class BaseImpl extends Base {
  public BaseImpl() {}

  public BaseImpl(int a) {
    this.a = a;
  }
}
