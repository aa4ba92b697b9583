// idl/valuerefs.idl on the omniORB side (tests/valuerefs.rs): an Account
// and a Shop servant, the Note value (its operation runs where the value
// is) and its factory, the wallets both peers build, and the text every
// peer gives for what a Describable holds.
#include <string>
#include "valuerefs.hh"

class AccountImpl : public POA_VRefs::Account {
 public:
  explicit AccountImpl(CORBA::Long n) : n_(n) {}
  CORBA::Long balance() { return n_; }
  void deposit(CORBA::Long amount) { n_ += amount; }

 private:
  CORBA::Long n_;
};

class ShopImpl : public POA_VRefs::Shop {
 public:
  char* describe() { return CORBA::string_dup("cxx shop"); }
};

class NoteImpl : public OBV_VRefs::Note, public CORBA::DefaultValueRefCountBase {
 public:
  NoteImpl() {}
  explicit NoteImpl(const char* text) : OBV_VRefs::Note(text) {}
  char* describe() {
    std::string s = std::string("cxx note ") + text();
    return CORBA::string_dup(s.c_str());
  }
};

template <class T>
class Factory : public CORBA::ValueFactoryBase {
 public:
  CORBA::ValueBase* create_for_unmarshal() { return new T(); }
};

static void register_factories(CORBA::ORB_ptr orb) {
  CORBA::ValueFactoryBase_var f = new Factory<NoteImpl>();
  orb->register_value_factory(VRefs::Note::_PD_repoId, f);
  f = new Factory<OBV_VRefs::Wallet>();
  orb->register_value_factory(VRefs::Wallet::_PD_repoId, f);
  f = new Factory<OBV_VRefs::Tagged>();
  orb->register_value_factory(VRefs::Tagged::_PD_repoId, f);
}

// Fills `w` as `wallet` in tests/valuerefs.rs does: every reference
// member is `acct`, and `more` holds a nil one too.
static void fill(VRefs::Wallet* w, const char* label, VRefs::Account_ptr acct,
                 VRefs::Describable_ptr about) {
  w->label(label);
  w->main(acct);
  w->obj(acct);
  VRefs::Holder h;
  h.name = CORBA::string_dup("cxx");
  h.acct = VRefs::Account::_duplicate(acct);
  w->owner(h);
  VRefs::Accounts more;
  more.length(2);
  more[0] = VRefs::Account::_duplicate(acct);
  more[1] = VRefs::Account::_nil();
  w->more(more);
  w->next(0);
  w->about(about);
}

static VRefs::Wallet* wallet(const char* label, VRefs::Account_ptr acct,
                             VRefs::Describable_ptr about) {
  VRefs::Wallet* w = new OBV_VRefs::Wallet();
  fill(w, label, acct, about);
  return w;
}

// "ref:<text>", "value:<text>" or "nil", calling describe() on `d`.
static std::string describe(VRefs::Describable_ptr d) {
  if (CORBA::is_nil(d)) return "nil";
  CORBA::String_var text = d->describe();
  CORBA::Object_var o = d->_to_object();
  return std::string(CORBA::is_nil(o) ? "value:" : "ref:") + text.in();
}
