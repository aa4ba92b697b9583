// omniORB server of AbsInterop::Hub (idl/abstract.idl) for the Peregrine
// client (tests/abstract_iface.rs). Prints "HUB <ior>" then "READY".

#include <iostream>
#include "abs_common.h"

class HubImpl : public POA_AbsInterop::Hub {
 public:
  explicit HubImpl(AbsInterop::Thing_ptr t) : thing_(AbsInterop::Thing::_duplicate(t)) {}
  char* inspect(AbsInterop::Named_ptr n) { return CORBA::string_dup(describe(n).c_str()); }
  AbsInterop::Named_ptr echo(AbsInterop::Named_ptr n) { return AbsInterop::Named::_duplicate(n); }
  AbsInterop::Named_ptr make(CORBA::Long kind) {
    if (kind == 1) return AbsInterop::Thing::_duplicate(thing_.in());
    if (kind == 2) return new LabelImpl("made");
    return AbsInterop::Named::_nil();
  }

 private:
  AbsInterop::Thing_var thing_;
};

int main(int argc, char** argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    register_label_factory(orb);
    CORBA::Object_var o = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var root = PortableServer::POA::_narrow(o);
    PortableServer::ObjectId_var tid = root->activate_object(new ThingImpl);
    CORBA::Object_var tref = root->id_to_reference(tid);
    AbsInterop::Thing_var thing = AbsInterop::Thing::_narrow(tref);
    PortableServer::ObjectId_var id = root->activate_object(new HubImpl(thing));
    CORBA::Object_var ref = root->id_to_reference(id);
    CORBA::String_var ior = orb->object_to_string(ref);
    root->the_POAManager()->activate();
    std::cout << "HUB " << ior << std::endl;
    std::cout << "READY" << std::endl;
    orb->run();
  } catch (CORBA::Exception& e) {
    std::cerr << "abs_server: " << e._name() << std::endl;
    return 1;
  }
  return 0;
}
