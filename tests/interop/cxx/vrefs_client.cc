// omniORB client of a Peregrine VRefs::Bank (tests/valuerefs.rs): argv[1]
// is the IOR. Its own Account (50) travels inside the wallets it sends,
// so the Peregrine servant calls back into it. Prints "OK <step>" per
// check that passed, "FAIL <step> (<what came>)" otherwise, then
// "DONE <failures>"; exits 1 when a step failed. The steps are those of
// python/vrefs_client.py.

#include <iostream>
#include <sstream>
#include "vrefs_common.h"

static int failures = 0;

static void step(const char* name, const std::string& got, const std::string& want) {
  if (got == want) {
    std::cout << "OK " << name << std::endl;
  } else {
    failures++;
    std::cout << "FAIL " << name << " (" << got << ")" << std::endl;
  }
}

// The balances read through each reference of `w`, and whether the nil
// one stayed nil.
static std::string refs(VRefs::Wallet* w) {
  std::ostringstream s;
  VRefs::Account_var obj = VRefs::Account::_narrow(w->obj());
  s << w->main()->balance() << "," << obj->balance() << "," << w->owner().acct->balance() << ","
    << w->more()[0]->balance() << "," << CORBA::is_nil(w->more()[1].in());
  return s.str();
}

int main(int argc, char** argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    register_factories(orb);
    CORBA::Object_var o = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var root = PortableServer::POA::_narrow(o);
    PortableServer::ObjectId_var aid = root->activate_object(new AccountImpl(50));
    CORBA::Object_var aref = root->id_to_reference(aid);
    VRefs::Account_var mine = VRefs::Account::_narrow(aref);
    PortableServer::ObjectId_var sid = root->activate_object(new ShopImpl);
    CORBA::Object_var sref = root->id_to_reference(sid);
    VRefs::Shop_var shop = VRefs::Shop::_narrow(sref);
    root->the_POAManager()->activate();
    CORBA::Object_var bo = orb->string_to_object(argv[1]);
    VRefs::Bank_var bank = VRefs::Bank::_narrow(bo);
    VRefs::Describable_ptr nil = VRefs::Describable::_nil();

    {
      VRefs::Wallet_var w = wallet("cxx", mine, nil);
      std::ostringstream s;
      s << bank->pay_into(w, 7);
      step("pay into", s.str(), "57");
    }
    {
      VRefs::Wallet_var w = wallet("cxx", mine, nil);
      w->next(w);
      VRefs::Wallet_var back = bank->echo(w);
      std::string got = std::string(back->label()) + (back->next() == back.in() ? " self " : " other ") + refs(back);
      step("echo", got, "cxx self 57,57,57,57,1");
      back->next(0);
      w->next(0);
    }
    {
      VRefs::Wallet_var m = bank->make();
      VRefs::Wallet* second = m->next();
      std::string got = std::string(m->label()) + " " + second->label() +
                        (second->next() == m.in() ? " cycle " : " open ") + refs(m) + " " + refs(second);
      step("make", got, "made second cycle 5,5,5,5,1 5,5,5,5,1");
    }
    {
      VRefs::Account_var a = bank->own();
      std::ostringstream s;
      s << a->balance();
      step("own", s.str(), "5");
    }
    {
      VRefs::Wallet_var w = wallet("a", mine, shop.in());
      CORBA::String_var got = bank->about(w);
      step("about ref", got.in(), "ref:cxx shop");
    }
    {
      CORBA::ValueBase_var keep = new NoteImpl("hi");
      VRefs::Wallet_var w = wallet("a", mine, dynamic_cast<NoteImpl*>(keep.in()));
      CORBA::String_var got = bank->about(w);
      step("about value", got.in(), "value:rust note hi");
    }
    {
      VRefs::Wallet_var w = wallet("a", mine, nil);
      CORBA::String_var got = bank->about(w);
      step("about nil", got.in(), "nil");
    }
    {
      CORBA::ValueBase_var keep = new NoteImpl("back");
      VRefs::Wallet_var w = wallet("a", mine, dynamic_cast<NoteImpl*>(keep.in()));
      VRefs::Wallet_var back = bank->echo(w);
      step("echo about", describe(back->about()), "value:cxx note back");
    }
    {
      // A Tagged where a Wallet is expected: Peregrine truncates it (the
      // chunks holding `extra`'s IOR skipped) and reads `main`.
      OBV_VRefs::Tagged* t = new OBV_VRefs::Tagged();
      VRefs::Wallet_var keep = t;
      fill(t, "t", mine, nil);
      t->extra(mine);
      std::ostringstream s;
      s << bank->extra(t);
      step("extra truncated", s.str(), "-57");
    }
    std::cout << "DONE " << failures << std::endl;
    orb->destroy();
  } catch (CORBA::SystemException& e) {
    std::cout << "FAIL exception " << e._name() << " minor=0x" << std::hex << e.minor() << std::endl;
    return 1;
  } catch (CORBA::Exception& e) {
    std::cout << "FAIL exception " << e._name() << std::endl;
    return 1;
  }
  return failures ? 1 : 0;
}
