// omniORB client of a Peregrine AbsInterop::Hub (tests/abstract_iface.rs):
// argv[1] is the IOR. Prints one "OK <step>" line per check that passed,
// "FAIL <step> (<what came>)" and exits 1 otherwise.

#include <cstring>
#include <iostream>
#include "abs_common.h"

static int failures = 0;

static void check(bool ok, const char* step, const std::string& got) {
  if (ok)
    std::cout << "OK " << step << std::endl;
  else
    std::cout << "FAIL " << step << " (" << got << ")" << std::endl;
  if (!ok) failures++;
}

static std::string inspect(AbsInterop::Hub_ptr hub, AbsInterop::Named_ptr n) {
  CORBA::String_var s = hub->inspect(n);
  return s.in();
}

int main(int argc, char** argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    register_label_factory(orb);
    // A Thing of this side, for the Peregrine servant to call back.
    CORBA::Object_var o = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var root = PortableServer::POA::_narrow(o);
    PortableServer::ObjectId_var tid = root->activate_object(new ThingImpl);
    CORBA::Object_var tref = root->id_to_reference(tid);
    AbsInterop::Thing_var mine = AbsInterop::Thing::_narrow(tref);
    root->the_POAManager()->activate();

    o = orb->string_to_object(argv[1]);
    AbsInterop::Hub_var hub = AbsInterop::Hub::_narrow(o);

    // Results: a reference (name() is a call to Peregrine), a value
    // (name() runs here, on this side's LabelImpl), nil.
    AbsInterop::Named_var r = hub->make(1);
    std::string d = describe(r);
    check(d == "ref:rust thing", "make ref", d);
    AbsInterop::Named_var v = hub->make(2);
    d = describe(v);
    AbsInterop::Label* l = AbsInterop::Label::_downcast(v.in());
    check(d == "value:cxx label made" && l && !strcmp(l->text(), "made"), "make value", d);
    AbsInterop::Named_var n = hub->make(0);
    check(CORBA::is_nil(n), "make nil", describe(n));

    // Arguments: Peregrine calls name() on what arrives.
    d = inspect(hub, r);
    check(d == "ref:rust thing", "inspect ref", d);
    d = inspect(hub, mine.in());
    check(d == "ref:cxx thing", "inspect own ref", d);
    AbsInterop::Label_var sent = new LabelImpl("sent");
    d = inspect(hub, sent.in());
    check(d == "value:rust label sent", "inspect value", d);
    d = inspect(hub, AbsInterop::Named::_nil());
    check(d == "nil", "inspect nil", d);

    // Both ways through one call.
    AbsInterop::Named_var e = hub->echo(sent.in());
    AbsInterop::Label* el = AbsInterop::Label::_downcast(e.in());
    check(el && !strcmp(el->text(), "sent"), "echo value", describe(e));
    e = hub->echo(mine.in());
    d = describe(e);
    check(d == "ref:cxx thing", "echo ref", d);
    e = hub->echo(AbsInterop::Named::_nil());
    check(CORBA::is_nil(e), "echo nil", describe(e));

    orb->destroy();
  } catch (CORBA::Exception& ex) {
    std::cerr << "abs_client: " << ex._name() << std::endl;
    return 1;
  }
  return failures ? 1 : 0;
}
