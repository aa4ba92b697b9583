// Value factories for idl/values.idl: omniORB needs one registered per
// concrete valuetype it unmarshals (value boxes need none). CxxDerived is
// registered only by the client, which sends it; the Peregrine side knows
// only its base and truncates it.
#include "values.hh"

template <class T>
class Factory : public CORBA::ValueFactoryBase {
 public:
  CORBA::ValueBase* create_for_unmarshal() { return new T(); }
};

static void register_factories(CORBA::ORB_ptr orb) {
  CORBA::ValueFactoryBase_var f;
  f = new Factory<OBV_ValInterop::Node>();
  orb->register_value_factory("IDL:ValInterop/Node:1.0", f);
  f = new Factory<OBV_ValInterop::Base>();
  orb->register_value_factory("IDL:ValInterop/Base:1.0", f);
  f = new Factory<OBV_ValInterop::Bag>();
  orb->register_value_factory("IDL:ValInterop/Bag:1.0", f);
}
