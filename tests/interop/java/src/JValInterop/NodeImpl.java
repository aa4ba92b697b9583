// Concrete classes of the JValInterop valuetypes (idl/jvalues.idl). JacORB
// finds `<Type>Impl` by name when it has no factory registered for a
// repository id and reads the value into a new instance of it.
package JValInterop;

public class NodeImpl extends Node {
  public NodeImpl() {}

  public NodeImpl(int id, String label, Node next) {
    this.id = id;
    this.label = label;
    this.next = next;
  }
}
