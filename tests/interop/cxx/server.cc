// omniORB server peer: implements Interop::Echo and checks everything it
// receives (raising Interop::Mismatch on a difference).
//
// usage: interop_server [-ORB... options]
// Prints "ECHO <ior>", "FWD <ior>" (a reference in a POA whose servant
// locator answers LOCATION_FORWARD to the Echo object) and "READY" on
// stdout, then serves until Echo::shutdown() or until killed.
#include "expected.h"
#include <omniORB4/CORBA.h>
#include <atomic>
#include <iostream>

static CORBA::ORB_var g_orb;

#define CHECK(cond, what)                                  \
  do {                                                     \
    if (!(cond)) {                                         \
      std::cerr << "server: mismatch: " << what << "\n";   \
      throw Interop::Mismatch(what);                       \
    }                                                      \
  } while (0)

class EchoImpl : public POA_Interop::Echo {
 public:
  CORBA::Short echo_short(CORBA::Short v) { return v; }
  CORBA::UShort echo_ushort(CORBA::UShort v) { return v; }
  CORBA::Long echo_long(CORBA::Long v) { return v; }
  CORBA::ULong echo_ulong(CORBA::ULong v) { return v; }
  CORBA::LongLong echo_longlong(CORBA::LongLong v) { return v; }
  CORBA::ULongLong echo_ulonglong(CORBA::ULongLong v) { return v; }
  CORBA::Float echo_float(CORBA::Float v) { return v; }
  CORBA::Double echo_double(CORBA::Double v) { return v; }
  CORBA::Boolean echo_boolean(CORBA::Boolean v) { return v; }
  CORBA::Char echo_char(CORBA::Char v) { return v; }
  CORBA::WChar echo_wchar(CORBA::WChar v) { return v; }
  CORBA::Octet echo_octet(CORBA::Octet v) { return v; }
  char* echo_string(const char* v) { return CORBA::string_dup(v); }
  CORBA::WChar* echo_wstring(const CORBA::WChar* v) { return CORBA::wstring_dup(v); }
  CORBA::LongLong mix(CORBA::Long a, CORBA::LongLong b, CORBA::Double& io, CORBA::Short& o) {
    io *= 2;
    o = (CORBA::Short)-a;
    return a + b;
  }
  Interop::Octets* echo_octets(const Interop::Octets& v) { return new Interop::Octets(v); }
  Interop::Longs* echo_longs(const Interop::Longs& v) { return new Interop::Longs(v); }
  Interop::Strings* echo_strings(const Interop::Strings& v) { return new Interop::Strings(v); }
  Interop::Doubles* echo_doubles(const Interop::Doubles& v) { return new Interop::Doubles(v); }
  Interop::Plains* echo_plains(const Interop::Plains& v) { return new Interop::Plains(v); }
  Interop::Plain echo_plain(const Interop::Plain& v) { return v; }
  Interop::Record* echo_record(const Interop::Record& v) { return new Interop::Record(v); }
  Interop::Color echo_color(Interop::Color v) { return v; }
  Interop::Choice* echo_choice(const Interop::Choice& v) { return new Interop::Choice(v); }
  Interop::Labels* echo_labels(const Interop::Labels& v) { return new Interop::Labels(v); }
  Interop::Matrix_slice* echo_matrix(const Interop::Matrix v) { return Interop::Matrix_dup(v); }
  Interop::Bytes8_slice* echo_bytes8(const Interop::Bytes8 v) { return Interop::Bytes8_dup(v); }

  void check_prims(CORBA::Short s, CORBA::UShort us, CORBA::Long l, CORBA::ULong ul,
                   CORBA::LongLong ll, CORBA::ULongLong ull, CORBA::Float f, CORBA::Double d,
                   CORBA::Boolean b, CORBA::Char c, CORBA::Octet o, const char* str) {
    CHECK(s == expected::S, "short");
    CHECK(us == expected::US, "unsigned short");
    CHECK(l == expected::L, "long");
    CHECK(ul == expected::UL, "unsigned long");
    CHECK(ll == expected::LL, "long long");
    CHECK(ull == expected::ULL, "unsigned long long");
    CHECK(f == expected::F, "float");
    CHECK(d == expected::D, "double");
    CHECK(b == expected::B, "boolean");
    CHECK(c == expected::C, "char");
    CHECK(o == expected::O, "octet");
    CHECK(strcmp(str, expected::STR) == 0, "string");
  }
  void check_wide(CORBA::WChar wc, const CORBA::WChar* ws) {
    CHECK(wc == expected::WC, "wchar");
    CHECK(expected::same_wstr(ws, expected::WSTR), "wstring");
  }
  void check_record(const Interop::Record& v) {
    std::string d = expected::diff_record(v);
    CHECK(d.empty(), ("record." + d).c_str());
  }
  void check_seqs(const Interop::Octets& o, const Interop::Longs& l, const Interop::Strings& s,
                  const Interop::Choice& c, const Interop::Matrix m, const Interop::Plains& p) {
    CHECK(o.length() == 4 && o[0] == 0 && o[1] == 1 && o[2] == 2 && o[3] == 255, "octets");
    CHECK(l.length() == 4 && l[0] == (CORBA::Long)0x80000000 && l[1] == -1 && l[2] == 0 &&
              l[3] == 0x7fffffff,
          "longs");
    CHECK(s.length() == 3 && strcmp(s[0], "a") == 0 && strcmp(s[1], "") == 0 &&
              strcmp(s[2], "three") == 0,
          "strings");
    CHECK(c._d() == 2 && strcmp(c.text(), "union") == 0, "choice");
    Interop::Matrix g;
    expected::grid(g);
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++) CHECK(m[i][j] == g[i][j], "matrix");
    CHECK(p.length() == 2 && expected::same_plain(p[0], expected::plain1()) &&
              expected::same_plain(p[1], expected::plain2()),
          "plains");
  }
  void check_labels(const Interop::Labels& v, CORBA::Long d) {
    std::string diff = expected::diff_labels(v, d);
    CHECK(diff.empty(), diff.c_str());
  }
  Interop::Labels* make_labels(CORBA::Long d) { return new Interop::Labels(expected::labels(d)); }
  Interop::Record* make_record() { return new Interop::Record(expected::record()); }
  CORBA::WChar* make_wstring() { return CORBA::wstring_dup(expected::WSTR); }

  Interop::Echo_ptr echo_self(Interop::Echo_ptr other) { return Interop::Echo::_duplicate(other); }
  CORBA::Long call_back(Interop::Callback_ptr cb, CORBA::Long x) {
    CHECK(!CORBA::is_nil(cb), "nil callback");
    CORBA::Long r = cb->ping(x);
    cb->note("from omniORB");
    CORBA::String_var last = cb->last();
    CHECK(strcmp(last, "from omniORB") == 0, "callback last()");
    return r;
  }
  CORBA::ULong call_back_big(Interop::Callback_ptr cb, CORBA::ULong n) {
    CHECK(!CORBA::is_nil(cb), "nil callback");
    Interop::Octets data;
    data.length(n);
    for (CORBA::ULong i = 0; i < n; i++) data[i] = (CORBA::Octet)(i % 251);
    return cb->take(data);
  }
  CORBA::Long fail(CORBA::Long how, CORBA::ULong code) {
    switch (how) {
      case 0: {
        Interop::Longs data;
        data.length(3);
        data[0] = 1; data[1] = 2; data[2] = 3;
        throw Interop::Oops((CORBA::Long)code, "oops", Interop::blue, data);
      }
      case 1: throw CORBA::BAD_PARAM(code, CORBA::COMPLETED_NO);
      case 2: throw CORBA::NO_PERMISSION(code, CORBA::COMPLETED_YES);
      default: return (CORBA::Long)code;
    }
  }
  void notify(CORBA::Long v) { sum += v; }
  CORBA::Long notified() { return sum.load(); }
  Interop::Octets* big_octets(const Interop::Octets& v, CORBA::ULong n) {
    for (CORBA::ULong i = 0; i < v.length(); i++)
      CHECK(v[i] == (CORBA::Octet)(i % 251), "big_octets content");
    Interop::Octets* r = new Interop::Octets;
    r->length(n);
    for (CORBA::ULong i = 0; i < n; i++) (*r)[i] = (CORBA::Octet)((i * 7) % 251);
    return r;
  }
  Interop::Doubles* big_doubles(const Interop::Doubles& v, CORBA::ULong n) {
    for (CORBA::ULong i = 0; i < v.length(); i++)
      CHECK(v[i] == i * 0.5, "big_doubles content");
    Interop::Doubles* r = new Interop::Doubles;
    r->length(n);
    for (CORBA::ULong i = 0; i < n; i++) (*r)[i] = -(i * 0.25);
    return r;
  }
  void shutdown() { g_orb->shutdown(0); }

 private:
  std::atomic<CORBA::Long> sum{0};
};

// Servant locator that forwards every request to a fixed target.
class Forwarder : public PortableServer::ServantLocator {
 public:
  Forwarder(CORBA::Object_ptr t) : target(CORBA::Object::_duplicate(t)) {}
  PortableServer::Servant preinvoke(const PortableServer::ObjectId&, PortableServer::POA_ptr,
                                    const char*, Cookie&) {
    throw PortableServer::ForwardRequest(target);
  }
  void postinvoke(const PortableServer::ObjectId&, PortableServer::POA_ptr, const char*, Cookie,
                  PortableServer::Servant) {}

 private:
  CORBA::Object_var target;
};

int main(int argc, char** argv) {
  try {
    g_orb = CORBA::ORB_init(argc, argv);
    CORBA::Object_var o = g_orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var root = PortableServer::POA::_narrow(o);
    PortableServer::POAManager_var mgr = root->the_POAManager();

    EchoImpl* servant = new EchoImpl();
    PortableServer::ObjectId_var oid = root->activate_object(servant);
    CORBA::Object_var echo = root->id_to_reference(oid);
    servant->_remove_ref();

    CORBA::PolicyList fl;
    fl.length(2);
    fl[0] = root->create_request_processing_policy(PortableServer::USE_SERVANT_MANAGER);
    fl[1] = root->create_servant_retention_policy(PortableServer::NON_RETAIN);
    PortableServer::POA_var fpoa = root->create_POA("Forward", mgr, fl);
    Forwarder* fwd = new Forwarder(echo);
    fpoa->set_servant_manager(fwd);
    PortableServer::ObjectId_var fid = PortableServer::string_to_ObjectId("Fwd1");
    CORBA::Object_var fref = fpoa->create_reference_with_id(fid, Interop::Echo::_PD_repoId);

    mgr->activate();
    CORBA::String_var s1 = g_orb->object_to_string(echo);
    CORBA::String_var s2 = g_orb->object_to_string(fref);
    std::cout << "ECHO " << (const char*)s1 << "\nFWD " << (const char*)s2 << "\nREADY"
              << std::endl;
    g_orb->run();
    g_orb->destroy();
  } catch (CORBA::SystemException& e) {
    std::cerr << "server: system exception " << e._name() << " minor " << e.minor() << "\n";
    return 1;
  } catch (CORBA::Exception& e) {
    std::cerr << "server: exception " << e._name() << "\n";
    return 1;
  }
  return 0;
}
