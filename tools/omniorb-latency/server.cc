// omniORB server of Ping: prints its IOR, then serves until killed.
#include <iostream>
#include "ping.hh"

class PingImpl : public POA_Ping {
 public:
  void send_no_params_2way() {}
};

int main(int argc, char** argv) {
  CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
  CORBA::Object_var o = orb->resolve_initial_references("RootPOA");
  PortableServer::POA_var poa = PortableServer::POA::_narrow(o);
  PingImpl* servant = new PingImpl;
  PortableServer::ObjectId_var id = poa->activate_object(servant);
  CORBA::Object_var ref = poa->id_to_reference(id);
  CORBA::String_var ior = orb->object_to_string(ref);
  std::cout << ior << std::endl;
  poa->the_POAManager()->activate();
  orb->run();
}
