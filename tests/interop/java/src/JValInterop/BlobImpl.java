package JValInterop;

import org.omg.CORBA.DataInputStream;
import org.omg.CORBA.DataOutputStream;

/**
 * The custom value: its state written and read by hand through JacORB's
 * DataOutputStream / DataInputStream, in the order Peregrine's
 * `CustomMarshal for Blob` (tests/interop/src/jvalues.rs) uses: long,
 * string, octet sequence, double, boolean. `make` and `diff` mirror
 * `jvalues::blob` and `jvalues::diff_blob`.
 */
public class BlobImpl extends Blob {
  public BlobImpl() {}

  /** The fixed Blob numbered `id`. */
  public static BlobImpl make(int id) {
    BlobImpl b = new BlobImpl();
    int n = Math.floorMod(id, 64) + 1;
    b.id = id;
    b.name = "blob " + id + " \u00e9";
    b.data = new byte[n];
    for (int i = 0; i < n; i++) b.data[i] = (byte) (id + 3 * i);
    b.ratio = id / 8.0;
    b.flag = id % 2 != 0;
    return b;
  }

  /** Empty when `b` is make(id), else the first field that differs. */
  public static String diff(Blob b, int id) {
    if (b == null) return "null";
    Blob e = make(id);
    if (b.id != e.id) return "id " + b.id;
    if (!b.name.equals(e.name)) return "name";
    if (!java.util.Arrays.equals(b.data, e.data)) return "data";
    if (Double.doubleToLongBits(b.ratio) != Double.doubleToLongBits(e.ratio)) return "ratio";
    if (b.flag != e.flag) return "flag";
    return "";
  }

  public void marshal(DataOutputStream os) {
    os.write_long(id);
    os.write_string(name);
    os.write_ulong(data.length);
    os.write_octet_array(data, 0, data.length);
    os.write_double(ratio);
    os.write_boolean(flag);
  }

  public void unmarshal(DataInputStream is) {
    id = is.read_long();
    name = is.read_string();
    int n = is.read_ulong();
    org.omg.CORBA.OctetSeqHolder h = new org.omg.CORBA.OctetSeqHolder(new byte[n]);
    is.read_octet_array(h, 0, n);
    data = h.value;
    ratio = is.read_double();
    flag = is.read_boolean();
  }
}
