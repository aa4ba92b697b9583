// omniORB server of ValInterop::Values (idl/values.idl) for the Peregrine
// client (tests/values.rs). Prints "VALUES <ior>" then "READY".

#include <cstring>
#include <iostream>
#include "values_common.h"

class ValuesImpl : public POA_ValInterop::Values {
 public:
  ValInterop::Node* echo_node(ValInterop::Node* n) {
    CORBA::add_ref(n);
    return n;
  }
  ValInterop::NodeSeq* echo_seq(const ValInterop::NodeSeq& s) {
    return new ValInterop::NodeSeq(s);
  }
  ValInterop::StrBox* echo_box(ValInterop::StrBox* b) {
    CORBA::add_ref(b);
    return b;
  }
  CORBA::Long base_a(ValInterop::Base* b) { return b ? b->a() : -1; }
  // A RustDerived arrives here truncated to Base (no factory for it,
  // nor any C++ type).
  CORBA::Long derived_a(ValInterop::Base* d) {
    if (!d) return -1;
    return strcmp(d->_NP_repositoryId(), "IDL:ValInterop/Base:1.0") ? -2 : d->a();
  }
  ValInterop::Base* make_base(CORBA::Long a) {
    return new OBV_ValInterop::Base(a);
  }
};

int main(int argc, char** argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    register_factories(orb);
    CORBA::Object_var o = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var root = PortableServer::POA::_narrow(o);
    ValuesImpl* impl = new ValuesImpl;
    PortableServer::ObjectId_var id = root->activate_object(impl);
    CORBA::Object_var ref = root->id_to_reference(id);
    CORBA::String_var ior = orb->object_to_string(ref);
    root->the_POAManager()->activate();
    std::cout << "VALUES " << ior << std::endl;
    std::cout << "READY" << std::endl;
    orb->run();
  } catch (CORBA::Exception& e) {
    std::cerr << "values_server: " << e._name() << std::endl;
    return 1;
  }
  return 0;
}
