// omniORB server of DynInterop::Dyn (idl/dynamic.idl) for the Peregrine
// DII client (tests/dynamic.rs). Prints "DYN <ior>" then "READY".

#include <iostream>
#include <sstream>
#include "dynamic.hh"

static CORBA::Long tree_sum(const DynInterop::Node& n) {
  CORBA::Long s = n.v;
  for (CORBA::ULong i = 0; i < n.kids.length(); i++) s += tree_sum(n.kids[i]);
  return s;
}

static void mirror(const DynInterop::Node& n, DynInterop::Node& out) {
  out.v = n.v;
  CORBA::ULong len = n.kids.length();
  out.kids.length(len);
  for (CORBA::ULong i = 0; i < len; i++) mirror(n.kids[len - 1 - i], out.kids[i]);
}

class DynImpl : public POA_DynInterop::Dyn {
 public:
  CORBA::Any* echo_any(const CORBA::Any& a) { return new CORBA::Any(a); }

  CORBA::TypeCode_ptr echo_tc(CORBA::TypeCode_ptr t) {
    return CORBA::TypeCode::_duplicate(t);
  }

  CORBA::Long sum_tree(const DynInterop::Node& n, DynInterop::Node_out m) {
    DynInterop::Node* out = new DynInterop::Node;
    mirror(n, *out);
    m = out;
    return tree_sum(n);
  }

  char* describe(const CORBA::Any& a, CORBA::Long& n) {
    n += 1;
    CORBA::TypeCode_var tc = a.type();
    std::ostringstream s;
    try {
      s << tc->id();
    } catch (CORBA::TypeCode::BadKind&) {
      s << "kind " << (int)tc->kind();
    }
    const DynInterop::Node* node;
    if (a >>= node) s << " sum=" << tree_sum(*node);
    return CORBA::string_dup(s.str().c_str());
  }

  void check(CORBA::Long code) {
    if (code != 0) throw DynInterop::Bad(code, "bad");
  }
};

int main(int argc, char** argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    CORBA::Object_var o = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var root = PortableServer::POA::_narrow(o);
    DynImpl* impl = new DynImpl;
    PortableServer::ObjectId_var id = root->activate_object(impl);
    CORBA::Object_var ref = root->id_to_reference(id);
    CORBA::String_var ior = orb->object_to_string(ref);
    root->the_POAManager()->activate();
    std::cout << "DYN " << ior << std::endl;
    std::cout << "READY" << std::endl;
    orb->run();
  } catch (CORBA::Exception& e) {
    std::cerr << "dyn_server: " << e._name() << std::endl;
    return 1;
  }
  return 0;
}
