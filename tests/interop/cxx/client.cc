// omniORB client peer: calls every operation of a (Peregrine) Interop::Echo
// and checks every result; serves an Interop::Callback the server calls
// back.
//
// usage: interop_client <echo-ior> <badkey-corbaloc> <giop-minor> [-ORB... options]
// Prints one line per step: "ok <step>", "expected <step>: <exception>"
// (an error the step is meant to raise) or "FAIL <step>: <why>", then
// "DONE <failures>". Exit status 0 when nothing failed, 1 otherwise, 2 on
// bad usage.
#include "expected.h"
#include <omniORB4/CORBA.h>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <sstream>

static int g_failures = 0;

// Thrown by CHECK inside a step.
struct Fail {
  std::string why;
};

#define CHECK(cond)                     \
  do {                                  \
    if (!(cond)) throw Fail{#cond};     \
  } while (0)

static std::string sysex(const CORBA::SystemException& e) {
  std::ostringstream s;
  s << e._name() << " minor=0x" << std::hex << e.minor() << std::dec << " completed="
    << (e.completed() == CORBA::COMPLETED_YES ? "YES"
                                              : e.completed() == CORBA::COMPLETED_NO ? "NO" : "MAYBE");
  return s.str();
}

#define STEP(name, ...)                                                                 \
  do {                                                                                  \
    try {                                                                               \
      __VA_ARGS__;                                                                      \
      std::cout << "ok " << name << std::endl;                                          \
    } catch (Fail & f) {                                                                \
      g_failures++;                                                                     \
      std::cout << "FAIL " << name << ": check " << f.why << std::endl;                 \
    } catch (Interop::Mismatch & m) {                                                   \
      g_failures++;                                                                     \
      std::cout << "FAIL " << name << ": server says Mismatch " << (const char*)m.what  \
                << std::endl;                                                           \
    } catch (CORBA::SystemException & e) {                                              \
      g_failures++;                                                                     \
      std::cout << "FAIL " << name << ": " << sysex(e) << std::endl;                    \
    } catch (CORBA::Exception & e) {                                                    \
      g_failures++;                                                                     \
      std::cout << "FAIL " << name << ": " << e._name() << std::endl;                   \
    }                                                                                   \
  } while (0)

// A step that must raise a system exception (e.g. wchar over GIOP 1.0).
#define STEP_RAISES(name, ...)                                                          \
  do {                                                                                  \
    try {                                                                               \
      __VA_ARGS__;                                                                      \
      g_failures++;                                                                     \
      std::cout << "FAIL " << name << ": no exception" << std::endl;                    \
    } catch (CORBA::SystemException & e) {                                              \
      std::cout << "expected " << name << ": " << sysex(e) << std::endl;                \
    } catch (CORBA::Exception & e) {                                                    \
      g_failures++;                                                                     \
      std::cout << "FAIL " << name << ": " << e._name() << std::endl;                   \
    }                                                                                   \
  } while (0)

// legal access to the protected omniObjRef::_locateRequest via a pointer-to-member
struct LocateHack : public omniObjRef {
  static void locate(omniObjRef* r) {
    void (omniObjRef::*pm)() = &LocateHack::_locateRequest;
    (r->*pm)();
  }
};

class CallbackImpl : public POA_Interop::Callback {
 public:
  CORBA::Long ping(CORBA::Long x) { return x + 1; }
  void note(const char* msg) {
    std::lock_guard<std::mutex> g(m);
    last_ = msg;
  }
  char* last() {
    std::lock_guard<std::mutex> g(m);
    return CORBA::string_dup(last_.c_str());
  }
  CORBA::ULong take(const Interop::Octets& data) {
    for (CORBA::ULong i = 0; i < data.length(); i++)
      if (data[i] != (CORBA::Octet)(i % 251)) throw Interop::Mismatch("take content");
    return data.length();
  }

 private:
  std::mutex m;
  std::string last_;
};

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: interop_client <echo-ior> <badkey-corbaloc> <giop-minor> [ORB options]\n";
    return 2;
  }
  std::string ior = argv[1], badkey = argv[2];
  int minor = atoi(argv[3]);
  int oargc = argc - 3;
  char** oargv = argv + 3;
  oargv[0] = argv[0];
  CORBA::ORB_var orb;
  try {
    orb = CORBA::ORB_init(oargc, oargv);
    CORBA::Object_var po = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var root = PortableServer::POA::_narrow(po);
    PortableServer::POAManager_var mgr = root->the_POAManager();
    mgr->activate();
    CallbackImpl* cbi = new CallbackImpl();
    PortableServer::ObjectId_var cbid = root->activate_object(cbi);
    CORBA::Object_var cbo = root->id_to_reference(cbid);
    Interop::Callback_var cb = Interop::Callback::_narrow(cbo);

    CORBA::Object_var o = orb->string_to_object(ior.c_str());
    Interop::Echo_var echo;

    STEP("narrow", echo = Interop::Echo::_narrow(o); CHECK(!CORBA::is_nil(echo)));
    if (CORBA::is_nil(echo)) {
      std::cout << "DONE " << g_failures << std::endl;
      return 1;
    }
    STEP("is_a", CHECK(echo->_is_a("IDL:Interop/Echo:1.0")); CHECK(!echo->_is_a("IDL:Other:1.0")));
    STEP("non_existent", CHECK(!echo->_non_existent()));
    STEP("locate_request", LocateHack::locate(echo->_PR_getobj()));

    STEP("echo_short", CHECK(echo->echo_short(-32768) == -32768));
    STEP("echo_ushort", CHECK(echo->echo_ushort(65535) == 65535));
    STEP("echo_long", CHECK(echo->echo_long(-2147483647 - 1) == -2147483647 - 1));
    STEP("echo_ulong", CHECK(echo->echo_ulong(4294967295UL) == 4294967295UL));
    STEP("echo_longlong", CHECK(echo->echo_longlong(-9223372036854775807LL - 1) ==
                                -9223372036854775807LL - 1));
    STEP("echo_ulonglong", CHECK(echo->echo_ulonglong(18446744073709551615ULL) ==
                                 18446744073709551615ULL));
    STEP("echo_float", CHECK(echo->echo_float(-0.375f) == -0.375f));
    STEP("echo_double", CHECK(echo->echo_double(1e-300) == 1e-300));
    STEP("echo_double_inf", CHECK(std::isinf(echo->echo_double(HUGE_VAL))));
    STEP("echo_boolean", CHECK(echo->echo_boolean(true) == true);
         CHECK(echo->echo_boolean(false) == false));
    STEP("echo_char", CHECK(echo->echo_char('q') == 'q'));
    STEP("echo_octet", CHECK(echo->echo_octet(0xff) == 0xff));
    STEP("echo_string", CORBA::String_var r = echo->echo_string(expected::STR);
         CHECK(strcmp(r, expected::STR) == 0));
    STEP("echo_string_empty", CORBA::String_var r = echo->echo_string("");
         CHECK(strcmp(r, "") == 0));
    STEP("mix", CORBA::Double io = 1.25; CORBA::Short out = 0;
         CORBA::LongLong r = echo->mix(5, 10000000000LL, io, out);
         CHECK(r == 10000000005LL); CHECK(io == 2.5); CHECK(out == -5));
    STEP("check_prims",
         echo->check_prims(expected::S, expected::US, expected::L, expected::UL, expected::LL,
                           expected::ULL, expected::F, expected::D, expected::B, expected::C,
                           expected::O, expected::STR));

    // Wide characters. GIOP 1.0 has no wchar code set negotiation (the
    // omniORB client refuses). In GIOP 1.1 omniORB marshals wchar and
    // wstring the GIOP 1.2 way (octet length, BOM/no terminator) while
    // Peregrine follows the 1.1 rules (fixed-size wchar, length in code
    // units with a terminator): both sides raise MARSHAL. The test
    // asserts the exact exceptions.
    if (minor < 2) {
      STEP_RAISES("echo_wchar", echo->echo_wchar(expected::WC));
      STEP_RAISES("echo_wstring", CORBA::WString_var r = echo->echo_wstring(expected::WSTR));
      STEP_RAISES("check_wide", echo->check_wide(expected::WC, expected::WSTR));
      STEP_RAISES("make_wstring", CORBA::WString_var r = echo->make_wstring());
    } else {
      STEP("echo_wchar", CHECK(echo->echo_wchar(expected::WC) == expected::WC));
      STEP("echo_wstring", CORBA::WString_var r = echo->echo_wstring(expected::WSTR);
           CHECK(expected::same_wstr(r, expected::WSTR)));
      STEP("echo_wstring_empty", CORBA::WString_var r = echo->echo_wstring(L"");
           CHECK(r[0] == 0));
      STEP("check_wide", echo->check_wide(expected::WC, expected::WSTR));
      STEP("make_wstring", CORBA::WString_var r = echo->make_wstring();
           CHECK(expected::same_wstr(r, expected::WSTR)));
    }

    STEP("echo_octets", Interop::Octets v; v.length(300);
         for (CORBA::ULong i = 0; i < 300; i++) v[i] = (CORBA::Octet)i;
         Interop::Octets_var r = echo->echo_octets(v); CHECK(r->length() == 300);
         for (CORBA::ULong i = 0; i < 300; i++) CHECK(r[i] == (CORBA::Octet)i));
    STEP("echo_longs", Interop::Longs v; v.length(5);
         for (CORBA::ULong i = 0; i < 5; i++) v[i] = (CORBA::Long)(i * 1000003) - 7;
         Interop::Longs_var r = echo->echo_longs(v); CHECK(r->length() == 5);
         for (CORBA::ULong i = 0; i < 5; i++) CHECK(r[i] == v[i]));
    STEP("echo_strings", Interop::Strings v; v.length(3); v[0] = CORBA::string_dup("x");
         v[1] = CORBA::string_dup(""); v[2] = CORBA::string_dup(expected::STR);
         Interop::Strings_var r = echo->echo_strings(v); CHECK(r->length() == 3);
         for (CORBA::ULong i = 0; i < 3; i++) CHECK(strcmp(r[i], v[i]) == 0));
    STEP("echo_doubles", Interop::Doubles v; v.length(7);
         for (CORBA::ULong i = 0; i < 7; i++) v[i] = i / 3.0;
         Interop::Doubles_var r = echo->echo_doubles(v); CHECK(r->length() == 7);
         for (CORBA::ULong i = 0; i < 7; i++) CHECK(r[i] == v[i]));
    STEP("echo_plains", Interop::Plains v; v.length(2); v[0] = expected::plain1();
         v[1] = expected::plain2(); Interop::Plains_var r = echo->echo_plains(v);
         CHECK(r->length() == 2); CHECK(expected::same_plain(r[0], v[0]));
         CHECK(expected::same_plain(r[1], v[1])));
    STEP("echo_plain", Interop::Plain r = echo->echo_plain(expected::plain1());
         CHECK(expected::same_plain(r, expected::plain1())));
    STEP("echo_record", Interop::Record_var r = echo->echo_record(expected::record());
         CHECK(expected::diff_record(r.in()) == ""));
    STEP("echo_color", CHECK(echo->echo_color(Interop::blue) == Interop::blue));
    STEP("echo_choice_num", Interop::Choice c; c.num(-5); Interop::Choice_var r = echo->echo_choice(c);
         CHECK(r->_d() == 1); CHECK(r->num() == -5));
    STEP("echo_choice_text", Interop::Choice c; c.text("union"); Interop::Choice_var r = echo->echo_choice(c);
         CHECK(r->_d() == 2); CHECK(strcmp(r->text(), "union") == 0));
    STEP("echo_choice_pod", Interop::Choice c; c.pod(expected::plain2());
         Interop::Choice_var r = echo->echo_choice(c); CHECK(r->_d() == 3);
         CHECK(expected::same_plain(r->pod(), expected::plain2())));
    STEP("echo_choice_default", Interop::Choice c; c.hue(Interop::red); c._d(42);
         Interop::Choice_var r = echo->echo_choice(c); CHECK(r->_d() == 42);
         CHECK(r->hue() == Interop::red));
    // Several labels and default: each discriminator arrives at
    // Peregrine (check_labels), comes back (echo_labels) and Peregrine's
    // values arrive with theirs (make_labels).
    for (CORBA::Long d : expected::LABEL_DISCS) {
      std::string n = std::to_string(d);
      STEP("echo_labels " + n, Interop::Labels_var r = echo->echo_labels(expected::labels(d));
           std::string diff = expected::diff_labels(r.in(), d); if (!diff.empty()) throw Fail{diff});
      STEP("check_labels " + n, echo->check_labels(expected::labels(d), d));
      STEP("make_labels " + n, Interop::Labels_var r = echo->make_labels(d);
           std::string diff = expected::diff_labels(r.in(), d); if (!diff.empty()) throw Fail{diff});
    }
    STEP("echo_matrix", Interop::Matrix m; expected::grid(m); m[1][2] = -9;
         Interop::Matrix_slice* r = echo->echo_matrix(m); bool same = true;
         for (int i = 0; i < 2; i++) for (int j = 0; j < 3; j++) same = same && r[i][j] == m[i][j];
         Interop::Matrix_free(r); CHECK(same));
    STEP("echo_bytes8", Interop::Bytes8 b; for (int i = 0; i < 8; i++) b[i] = (CORBA::Octet)(250 + i);
         Interop::Bytes8_slice* r = echo->echo_bytes8(b); bool same = memcmp(r, b, 8) == 0;
         Interop::Bytes8_free(r); CHECK(same));
    STEP("check_record", echo->check_record(expected::record()));
    STEP("check_seqs", Interop::Octets o; o.length(4); o[0] = 0; o[1] = 1; o[2] = 2; o[3] = 255;
         Interop::Longs l; l.length(4); l[0] = -2147483647 - 1; l[1] = -1; l[2] = 0; l[3] = 2147483647;
         Interop::Strings s; s.length(3); s[0] = CORBA::string_dup("a"); s[1] = CORBA::string_dup("");
         s[2] = CORBA::string_dup("three"); Interop::Choice c; c.text("union");
         Interop::Matrix m; expected::grid(m);
         Interop::Plains p; p.length(2); p[0] = expected::plain1(); p[1] = expected::plain2();
         echo->check_seqs(o, l, s, c, m, p));
    STEP("make_record", Interop::Record_var r = echo->make_record();
         CHECK(expected::diff_record(r.in()) == ""));

    STEP("echo_self", Interop::Echo_var r = echo->echo_self(echo); CHECK(!CORBA::is_nil(r));
         CHECK(r->_is_equivalent(echo)); CHECK(r->echo_long(17) == 17));
    STEP("echo_self_nil", Interop::Echo_var r = echo->echo_self(Interop::Echo::_nil());
         CHECK(CORBA::is_nil(r)));
    STEP("call_back", CHECK(echo->call_back(cb, 41) == 42));
    STEP("call_back_big", CHECK(echo->call_back_big(cb, 1u << 20) == 1u << 20));

    STEP("fail_user", try { echo->fail(0, 77); throw Fail{"no exception"}; }
         catch (Interop::Oops& e) {
           CHECK(e.code == 77); CHECK(strcmp(e.why, "oops") == 0); CHECK(e.hue == Interop::blue);
           CHECK(e.data.length() == 3); CHECK(e.data[0] == 1 && e.data[1] == 2 && e.data[2] == 3);
         });
    STEP("fail_bad_param", try { echo->fail(1, 0x50470007); throw Fail{"no exception"}; }
         catch (CORBA::BAD_PARAM& e) {
           CHECK(e.minor() == 0x50470007); CHECK(e.completed() == CORBA::COMPLETED_NO);
         });
    STEP("fail_no_permission", try { echo->fail(2, 42); throw Fail{"no exception"}; }
         catch (CORBA::NO_PERMISSION& e) {
           CHECK(e.minor() == 42); CHECK(e.completed() == CORBA::COMPLETED_YES);
         });
    STEP("fail_none", CHECK(echo->fail(3, 9) == 9));
    STEP("bad_key", try {
           CORBA::Object_var b = orb->string_to_object(badkey.c_str());
           Interop::Echo_var be = Interop::Echo::_unchecked_narrow(b);
           be->echo_long(1);
           throw Fail{"no exception"};
         } catch (CORBA::OBJECT_NOT_EXIST&) {
         });

    STEP("oneway", for (CORBA::Long i = 1; i <= 10; i++) echo->notify(i);
         CHECK(echo->notified() == 55));

    STEP("big_octets", Interop::Octets v; v.length(1u << 20);
         for (CORBA::ULong i = 0; i < v.length(); i++) v[i] = (CORBA::Octet)(i % 251);
         Interop::Octets_var r = echo->big_octets(v, 1u << 20); CHECK(r->length() == 1u << 20);
         bool same = true;
         for (CORBA::ULong i = 0; i < r->length(); i++) same = same && r[i] == (CORBA::Octet)((i * 7) % 251);
         CHECK(same));
    STEP("big_doubles", Interop::Doubles v; v.length(1u << 17);
         for (CORBA::ULong i = 0; i < v.length(); i++) v[i] = i * 0.5;
         Interop::Doubles_var r = echo->big_doubles(v, 1u << 17); CHECK(r->length() == 1u << 17);
         bool same = true;
         for (CORBA::ULong i = 0; i < r->length(); i++) same = same && r[i] == -(i * 0.25);
         CHECK(same));
    // The connection still works after the large messages.
    STEP("after_big", CHECK(echo->echo_long(5) == 5));
  } catch (CORBA::SystemException& e) {
    g_failures++;
    std::cout << "FAIL setup: " << sysex(e) << std::endl;
  } catch (CORBA::Exception& e) {
    g_failures++;
    std::cout << "FAIL setup: " << e._name() << std::endl;
  }
  std::cout << "DONE " << g_failures << std::endl;
  try {
    if (!CORBA::is_nil(orb)) orb->destroy();
  } catch (...) {
  }
  return g_failures == 0 ? 0 : 1;
}
