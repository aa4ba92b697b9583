// The fixed values both sides check (mirrored in src/expected.rs), and
// helpers shared by the omniORB peers.
#ifndef INTEROP_EXPECTED_H
#define INTEROP_EXPECTED_H

#include "interop.hh"
#include <cstring>
#include <sstream>
#include <string>

namespace expected {
const CORBA::Short S = -12345;
const CORBA::UShort US = 54321;
const CORBA::Long L = -1234567890;
const CORBA::ULong UL = 4000000000UL;
const CORBA::LongLong LL = -1234567890123456789LL;
const CORBA::ULongLong ULL = 18000000000000000000ULL;
const CORBA::Float F = 1.5f;
const CORBA::Double D = 3.141592653589793;
const CORBA::Boolean B = true;
const CORBA::Char C = 'Z';
const CORBA::Octet O = 0xA5;
// "Peregrine café" in omniORB's native char set (ISO 8859-1).
const char* const STR = "Peregrine caf\xe9";
const CORBA::WChar WC = 0x20AC;  // EURO SIGN
// Basic multilingual plane only: every wchar code set can carry it.
const CORBA::WChar WSTR[] = {'w', 'i', 'd', 'e', ' ', 0x20AC, ' ', 0xFC, ' ', 0x3A9, ' ', 0x65E5, 0};

inline Interop::Plain plain1() {
  Interop::Plain p;
  p.s = -2; p.c = 'p'; p.l = 123456; p.o = 9; p.d = 0.125;
  return p;
}
inline Interop::Plain plain2() {
  Interop::Plain p;
  p.s = 1; p.c = 'q'; p.l = 2; p.o = 3; p.d = 4.5;
  return p;
}
inline void grid(Interop::Matrix m) {
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) m[i][j] = i * 3 + j + 1;
}
inline Interop::Record record() {
  Interop::Record r;
  r.nested.id = 7;
  r.nested.name = CORBA::string_dup("inner");
  r.pod = plain1();
  r.hue = Interop::green;
  r.values.length(3);
  r.values[0] = 1; r.values[1] = -2; r.values[2] = 3;
  grid(r.grid);
  r.flag = true;
  return r;
}

inline bool same_plain(const Interop::Plain& a, const Interop::Plain& b) {
  return a.s == b.s && a.c == b.c && a.l == b.l && a.o == b.o && a.d == b.d;
}

// Empty string when equal, else the first difference.
inline std::string diff_record(const Interop::Record& v) {
  Interop::Record e = record();
  if (v.nested.id != e.nested.id) return "inner.id";
  if (strcmp(v.nested.name, e.nested.name) != 0) return "inner.name";
  if (!same_plain(v.pod, e.pod)) return "plain";
  if (v.hue != e.hue) return "color";
  if (v.values.length() != e.values.length()) return "values.length";
  for (CORBA::ULong i = 0; i < v.values.length(); i++)
    if (v.values[i] != e.values[i]) return "values";
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      if (v.grid[i][j] != e.grid[i][j]) return "grid";
  if (v.flag != e.flag) return "flag";
  return "";
}

// The discriminators both sides send for Labels: every label and
// default values on both sides of them.
const CORBA::Long LABEL_DISCS[] = {1, 2, 3, 0, 42, -1};

// The fixed Labels with discriminator `d`.
inline Interop::Labels labels(CORBA::Long d) {
  Interop::Labels v;
  switch (d) {
    case 1: v.num(-7); break;
    case 2: case 3: v.text("labels"); break;
    default: v.hue(Interop::blue); break;
  }
  v._d(d);  // another label of the same branch (C++ mapping)
  return v;
}

// Empty string when `v` is labels(d), else the first difference.
inline std::string diff_labels(const Interop::Labels& v, CORBA::Long d) {
  if (v._d() != d) {
    std::ostringstream s;
    s << "labels._d " << v._d() << " != " << d;
    return s.str();
  }
  switch (d) {
    case 1: if (v.num() != -7) return "labels.num"; break;
    case 2: case 3: if (strcmp(v.text(), "labels") != 0) return "labels.text"; break;
    default: if (v.hue() != Interop::blue) return "labels.hue"; break;
  }
  return "";
}

inline bool same_wstr(const CORBA::WChar* a, const CORBA::WChar* b) {
  for (;; a++, b++) {
    if (*a != *b) return false;
    if (!*a) return true;
  }
}
}  // namespace expected

#endif
