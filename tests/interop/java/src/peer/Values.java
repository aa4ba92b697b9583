// Comparisons of the fixed values (Expected.java, generated from
// src/expected.rs) shared by the JacORB server and client peers.
package peer;

import Interop.*;
import Interop.Record; // not java.lang.Record
import java.util.Arrays;

final class Values {
  private Values() {}

  static boolean samePlain(Plain a, Plain b) {
    return a.s == b.s && a.c == b.c && a.l == b.l && a.o == b.o && a.d == b.d;
  }

  /** Empty when `v` is the fixed Record, else the first difference. */
  static String diffRecord(Record v) {
    Record e = Expected.record();
    if (v.nested.id != e.nested.id) return "inner.id";
    if (!v.nested.name.equals(e.nested.name)) return "inner.name";
    if (!samePlain(v.pod, e.pod)) return "plain";
    if (v.hue.value() != e.hue.value()) return "color";
    if (!Arrays.equals(v.values, e.values)) return "values";
    if (!Arrays.deepEquals(v.grid, e.grid)) return "grid";
    if (v.flag != e.flag) return "flag";
    return "";
  }

  /**
   * The fixed Labels with discriminator `d`. JacORB's generated modifier
   * for the default branch accepts only the discriminator 0 and raises
   * BAD_OPERATION for any other default value (such as 42 or -1).
   */
  static Labels labels(int d) {
    Labels v = new Labels();
    switch (d) {
      case 1: v.num(Expected.LABEL_NUM); break;
      case 2: case 3: v.text(d, Expected.LABEL_TEXT); break;
      default: v.hue(d, Expected.LABEL_HUE); break;
    }
    return v;
  }

  /** Empty when `v` is labels(d), else the first difference. */
  static String diffLabels(Labels v, int d) {
    if (v.discriminator() != d) return "labels._d " + v.discriminator() + " != " + d;
    switch (d) {
      case 1: if (v.num() != Expected.LABEL_NUM) return "labels.num"; break;
      case 2: case 3: if (!v.text().equals(Expected.LABEL_TEXT)) return "labels.text"; break;
      default: if (v.hue().value() != Expected.LABEL_HUE.value()) return "labels.hue"; break;
    }
    return "";
  }
}
