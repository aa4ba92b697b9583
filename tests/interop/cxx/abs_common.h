// idl/abstract.idl on the omniORB side: the value supporting `Named`
// (its operation runs where the value is), its factory, a `Thing`
// servant, and the text both peers print for what a `Named` holds.
#include <string>
#include "abstract.hh"

class LabelImpl : public OBV_AbsInterop::Label, public CORBA::DefaultValueRefCountBase {
 public:
  LabelImpl() {}
  explicit LabelImpl(const char* text) : OBV_AbsInterop::Label(text) {}
  char* name() {
    std::string s = std::string("cxx label ") + text();
    return CORBA::string_dup(s.c_str());
  }
};

class LabelFactory : public CORBA::ValueFactoryBase {
 public:
  CORBA::ValueBase* create_for_unmarshal() { return new LabelImpl(); }
};

static void register_label_factory(CORBA::ORB_ptr orb) {
  CORBA::ValueFactoryBase_var f = new LabelFactory();
  orb->register_value_factory(AbsInterop::Label::_PD_repoId, f);
}

class ThingImpl : public POA_AbsInterop::Thing {
 public:
  char* name() { return CORBA::string_dup("cxx thing"); }
  CORBA::Long id() { return 7; }
};

// "ref:<name>", "value:<name>" or "nil", calling name() on the instance.
static std::string describe(AbsInterop::Named_ptr n) {
  if (CORBA::is_nil(n)) return "nil";
  CORBA::String_var name = n->name();
  CORBA::Object_var o = n->_to_object();
  return std::string(CORBA::is_nil(o) ? "value:" : "ref:") + name.in();
}
