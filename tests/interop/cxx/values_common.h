// Value factories for idl/values.idl: omniORB needs one registered per
// concrete valuetype it unmarshals (value boxes need none). CxxDerived is
// registered only by the client, which sends it; the Peregrine side knows
// only its base and truncates it.
#include <string>
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
  f = new Factory<OBV_ValInterop::GNode>();
  orb->register_value_factory("IDL:ValInterop/GNode:1.0", f);
}

// What `Anything::kind` answers for a GNode (see idl/values.idl): by
// identity, so a cycle shows as "root" or "self".
static std::string describe_gnode(ValInterop::GNode* r) {
  std::string s = std::string("GNode ") + r->name();
  const ValInterop::GEdges& es = r->edges();
  for (CORBA::ULong i = 0; i < es.length(); ++i) {
    ValInterop::GNode* t = es[i].target.in();
    s += " " + std::to_string(es[i].weight) + ":";
    if (t == r) {
      s += "root";
      continue;
    }
    if (!t) {
      s += "null";
      continue;
    }
    s += std::string(t->name()) + "[";
    const ValInterop::GEdges& ts = t->edges();
    for (CORBA::ULong j = 0; j < ts.length(); ++j) {
      ValInterop::GNode* u = ts[j].target.in();
      if (j) s += ",";
      s += u == r ? std::string("root")
                  : u == t ? std::string("self")
                           : u ? std::string(u->name()) : std::string("null");
    }
    s += "]";
  }
  return s;
}
