// omniORB DII client of DynInterop::Dyn (idl/dynamic.idl) for the
// Peregrine DSI server (tests/dynamic.rs): every call is a
// CORBA::Request built at run time with Any arguments, including `any`
// and `TypeCode` values and a recursive struct TypeCode created with
// ORB::create_recursive_tc. Usage: dyn_client <ior> [omniORB args].
// Prints "OK <step>" or "FAIL <step>: <why>" per step, then
// "DONE <failures>".

#include <iostream>
#include <sstream>
#include <string>
#include "dynamic.hh"

static int failures = 0;

static void report(const char* step, bool ok, const std::string& why) {
  if (ok) {
    std::cout << "OK " << step << std::endl;
  } else {
    failures++;
    std::cout << "FAIL " << step << ": " << why << std::endl;
  }
}

// Runs the request; a system exception (thrown or left in env()) is a
// failure of `step`. Returns false if the call failed that way.
static bool run(CORBA::Request_ptr req, const char* step) {
  try {
    req->invoke();
  } catch (CORBA::SystemException& e) {
    report(step, false, std::string("invoke threw ") + e._name());
    return false;
  }
  CORBA::Exception* ex = req->env()->exception();
  if (ex && CORBA::SystemException::_downcast(ex)) {
    report(step, false, std::string("system exception ") + ex->_name());
    return false;
  }
  return true;
}

// A tree of `depth` levels with `width` children per node, values 1, 2, ...
static void tree(DynInterop::Node& n, int depth, int width, CORBA::Long& next) {
  n.v = ++next;
  n.kids.length(depth == 0 ? 0 : width);
  for (CORBA::ULong i = 0; i < n.kids.length(); i++) tree(n.kids[i], depth - 1, width, next);
}

static CORBA::Long tree_sum(const DynInterop::Node& n) {
  CORBA::Long s = n.v;
  for (CORBA::ULong i = 0; i < n.kids.length(); i++) s += tree_sum(n.kids[i]);
  return s;
}

static bool mirrored(const DynInterop::Node& a, const DynInterop::Node& b) {
  CORBA::ULong len = a.kids.length();
  if (a.v != b.v || len != b.kids.length()) return false;
  for (CORBA::ULong i = 0; i < len; i++)
    if (!mirrored(a.kids[i], b.kids[len - 1 - i])) return false;
  return true;
}

static bool same(const DynInterop::Node& a, const DynInterop::Node& b) {
  if (a.v != b.v || a.kids.length() != b.kids.length()) return false;
  for (CORBA::ULong i = 0; i < a.kids.length(); i++)
    if (!same(a.kids[i], b.kids[i])) return false;
  return true;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: dyn_client <ior> [omniORB args]" << std::endl;
    return 2;
  }
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    CORBA::Object_var obj = orb->string_to_object(argv[1]);
    DynInterop::Node t;
    CORBA::Long next = 0;
    tree(t, 3, 3, next);

    // 1. echo_any with a long inside.
    {
      CORBA::Request_var req = obj->_request("echo_any");
      CORBA::Any a;
      a <<= (CORBA::Long)42;
      req->add_in_arg("a") <<= a;
      req->set_return_type(CORBA::_tc_any);
      if (run(req, "echo_any long")) {
        const CORBA::Any* r;
        CORBA::Long v = 0;
        bool ok = (req->return_value() >>= r) && (*r >>= v) && v == 42;
        report("echo_any long", ok, "wrong value");
      }
    }
    // 2. echo_any with a recursive struct inside (TypeCode with an
    //    indirection, value of a type the server knows only dynamically).
    {
      CORBA::Request_var req = obj->_request("echo_any");
      CORBA::Any a;
      a <<= t;
      req->add_in_arg("a") <<= a;
      req->set_return_type(CORBA::_tc_any);
      if (run(req, "echo_any Node")) {
        const CORBA::Any* r;
        const DynInterop::Node* n;
        CORBA::TypeCode_var tc;
        bool ok = (req->return_value() >>= r) && (tc = r->type(), true) &&
                  tc->equivalent(DynInterop::_tc_Node) && (*r >>= n) && same(*n, t);
        report("echo_any Node", ok, "wrong value or TypeCode");
      }
    }
    // 3. echo_tc with a recursive struct TypeCode built at run time.
    {
      CORBA::TypeCode_var rec = orb->create_recursive_tc("IDL:DynInterop/Node:1.0");
      CORBA::TypeCode_var seq = orb->create_sequence_tc(0, rec);
      CORBA::StructMemberSeq members;
      members.length(2);
      members[0].name = CORBA::string_dup("v");
      members[0].type = CORBA::TypeCode::_duplicate(CORBA::_tc_long);
      members[1].name = CORBA::string_dup("kids");
      members[1].type = CORBA::TypeCode::_duplicate(seq);
      CORBA::TypeCode_var node =
          orb->create_struct_tc("IDL:DynInterop/Node:1.0", "Node", members);
      CORBA::Request_var req = obj->_request("echo_tc");
      req->add_in_arg("t") <<= node.in();
      req->set_return_type(CORBA::_tc_TypeCode);
      if (run(req, "echo_tc recursive")) {
        CORBA::TypeCode_ptr r;
        bool ok = (req->return_value() >>= r) && r->equal(node) &&
                  r->equivalent(DynInterop::_tc_Node) &&
                  r->member_type(1)->content_type()->equal(node);
        report("echo_tc recursive", ok, "TypeCode changed on the way");
      }
    }
    // 4. sum_tree: recursive struct in, out.
    {
      CORBA::Request_var req = obj->_request("sum_tree");
      req->add_in_arg("n") <<= t;
      req->add_out_arg("mirrored") <<= DynInterop::Node();
      req->set_return_type(CORBA::_tc_long);
      if (run(req, "sum_tree")) {
        CORBA::Long s = 0;
        const DynInterop::Node* m;
        bool ok = (req->return_value() >>= s) && s == tree_sum(t) &&
                  (*req->arguments()->item(1)->value() >>= m) && mirrored(t, *m);
        std::ostringstream why;
        why << "sum " << s << " (want " << tree_sum(t) << ") or wrong mirror";
        report("sum_tree", ok, why.str());
      }
    }
    // 5. describe: any holding a Node, inout long.
    {
      CORBA::Request_var req = obj->_request("describe");
      CORBA::Any a;
      a <<= t;
      req->add_in_arg("a") <<= a;
      req->add_inout_arg("n") <<= (CORBA::Long)5;
      req->set_return_type(CORBA::_tc_string);
      if (run(req, "describe")) {
        const char* s = 0;
        CORBA::Long n = 0;
        std::ostringstream want;
        want << "IDL:DynInterop/Node:1.0 sum=" << tree_sum(t);
        bool ok = (req->return_value() >>= s) && want.str() == s &&
                  (*req->arguments()->item(1)->value() >>= n) && n == 6;
        report("describe", ok, std::string("got ") + (s ? s : "(null)"));
      }
    }
    // 6. check(3): the user exception Bad, decoded by its TypeCode.
    {
      CORBA::Request_var req = obj->_request("check");
      req->add_in_arg("code") <<= (CORBA::Long)3;
      req->set_return_type(CORBA::_tc_void);
      req->exceptions()->add(DynInterop::_tc_Bad);
      try {
        req->invoke();
      } catch (CORBA::Exception&) {
      }
      CORBA::Exception* ex = req->env()->exception();
      CORBA::UnknownUserException* u =
          ex ? CORBA::UnknownUserException::_downcast(ex) : 0;
      const DynInterop::Bad* b;
      bool ok = u && (u->exception() >>= b) && b->code == 3 &&
                std::string(b->why.in()) == "bad";
      report("check raises Bad", ok, ex ? ex->_name() : "no exception");
    }
    // 7. A deferred echo_any of a TypeCode inside an any.
    {
      CORBA::Request_var req = obj->_request("echo_any");
      CORBA::Any a;
      a <<= DynInterop::_tc_Node;
      req->add_in_arg("a") <<= a;
      req->set_return_type(CORBA::_tc_any);
      req->send_deferred();
      req->get_response();
      const CORBA::Any* r;
      CORBA::TypeCode_ptr tc;
      bool ok = !req->env()->exception() && (req->return_value() >>= r) &&
                (*r >>= tc) && tc->equal(DynInterop::_tc_Node);
      report("deferred echo_any TypeCode", ok, "wrong value");
    }
    // 8. An operation the DSI servant does not know: BAD_OPERATION.
    {
      CORBA::Request_var req = obj->_request("no_such_op");
      try {
        req->invoke();
      } catch (CORBA::Exception&) {
      }
      CORBA::Exception* ex = req->env()->exception();
      bool ok = ex && CORBA::BAD_OPERATION::_downcast(ex);
      report("unknown operation", ok, ex ? ex->_name() : "no exception");
    }
    orb->destroy();
  } catch (CORBA::Exception& e) {
    std::cout << "FAIL exception " << e._name() << std::endl;
    failures++;
  }
  std::cout << "DONE " << failures << std::endl;
  return failures == 0 ? 0 : 1;
}
