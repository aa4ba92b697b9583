// omniORB server of VRefs::Bank (idl/valuerefs.idl) for the Peregrine
// client (tests/valuerefs.rs). Its own account holds 5; the wallets it
// receives are used through their references. Prints "BANK <ior>" then
// "READY".

#include <iostream>
#include "vrefs_common.h"

class BankImpl : public POA_VRefs::Bank {
 public:
  explicit BankImpl(VRefs::Account_ptr a) : acct_(VRefs::Account::_duplicate(a)) {}
  CORBA::Long pay_into(VRefs::Wallet* p, CORBA::Long amount) {
    p->main()->deposit(amount);
    return p->owner().acct->balance();
  }
  VRefs::Wallet* echo(VRefs::Wallet* p) {
    CORBA::add_ref(p);
    return p;
  }
  VRefs::Wallet* make() {
    // Two wallets listing each other (a cycle: it leaks, as cycles of
    // reference-counted values do in C++).
    VRefs::Wallet* first = wallet("made", acct_, VRefs::Describable::_nil());
    VRefs::Wallet_var second = wallet("second", acct_, VRefs::Describable::_nil());
    first->next(second);
    second->next(first);
    return first;
  }
  VRefs::Account_ptr own() { return VRefs::Account::_duplicate(acct_); }
  char* about(VRefs::Wallet* p) { return CORBA::string_dup(describe(p->about()).c_str()); }
  CORBA::Long extra(VRefs::Wallet* p) {
    VRefs::Tagged* t = VRefs::Tagged::_downcast(p);
    if (t) return t->extra()->balance();
    return -p->main()->balance();
  }

 private:
  VRefs::Account_var acct_;
};

int main(int argc, char** argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    register_factories(orb);
    CORBA::Object_var o = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var root = PortableServer::POA::_narrow(o);
    PortableServer::ObjectId_var aid = root->activate_object(new AccountImpl(5));
    CORBA::Object_var aref = root->id_to_reference(aid);
    VRefs::Account_var acct = VRefs::Account::_narrow(aref);
    PortableServer::ObjectId_var id = root->activate_object(new BankImpl(acct));
    CORBA::Object_var ref = root->id_to_reference(id);
    CORBA::String_var ior = orb->object_to_string(ref);
    root->the_POAManager()->activate();
    std::cout << "BANK " << ior << std::endl;
    std::cout << "READY" << std::endl;
    orb->run();
  } catch (CORBA::Exception& e) {
    std::cerr << "vrefs_server: " << e._name() << std::endl;
    return 1;
  }
  return 0;
}
