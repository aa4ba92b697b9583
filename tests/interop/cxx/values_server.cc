// omniORB server of ValInterop::Values (idl/values.idl) for the Peregrine
// client (tests/values.rs). Prints "VALUES <ior>" then "READY".

#include <cstring>
#include <iostream>
#include <string>
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

// ValueBase parameters: omniORB finds the type by the registered
// factories (values_common.h).
class AnythingImpl : public POA_ValInterop::Anything {
 public:
  char* kind(CORBA::ValueBase* v) {
    if (!v) return CORBA::string_dup("null");
    std::string s;
    if (ValInterop::Node* n = ValInterop::Node::_downcast(v)) {
      s = "Node " + std::to_string(n->id());
    } else if (ValInterop::Base* b = ValInterop::Base::_downcast(v)) {
      s = "Base " + std::to_string(b->a());
    } else if (ValInterop::StrBox* x = ValInterop::StrBox::_downcast(v)) {
      s = std::string("StrBox ") + x->_value();
    } else if (ValInterop::Bag* g = ValInterop::Bag::_downcast(v)) {
      // Where the bag lists itself: the cycle omniORB closed.
      const ValInterop::ValueSeq& items = g->items();
      long self = -1;
      for (CORBA::ULong i = 0; i < items.length(); ++i) {
        if (items[i].in() == v) self = (long)i;
      }
      s = std::string("Bag ") + g->name() + " " +
          std::to_string(items.length()) + " self " + std::to_string(self);
    } else if (ValInterop::GNode* g = ValInterop::GNode::_downcast(v)) {
      s = describe_gnode(g);
    } else {
      s = "other";
    }
    return CORBA::string_dup(s.c_str());
  }
  CORBA::ValueBase* echo_value(CORBA::ValueBase* v) {
    if (v) CORBA::add_ref(v);
    return v;
  }
  CORBA::Boolean same(CORBA::ValueBase* a, CORBA::ValueBase* b,
                      CORBA::ValueBase_out b2) {
    if (b) CORBA::add_ref(b);
    b2 = b;
    return a != 0 && a == b;
  }
};

// Extracts a value from the any by omniidl's TypeCodes (see AnyEcho in
// idl/values.idl), checks the graph, changes it and sends it back.
class AnyEchoImpl : public POA_ValInterop::AnyEcho {
 public:
  CORBA::Any* echo_any(const CORBA::Any& a) {
    CORBA::Any* r = new CORBA::Any;
    ValInterop::Node* n;  // owned by `a`
    const ValInterop::NodeSeq* s;
    ValInterop::StrBox* b;
    if (a >>= n) {
      // The graph must arrive as a cycle: n -> next -> n.
      if (!n || !n->next() || n->next()->next() != n) {
        delete r;
        throw CORBA::BAD_PARAM(1, CORBA::COMPLETED_NO);
      }
      n->id(n->id() + 1000);
      *r <<= n;  // copying insertion: the graph goes back whole
    } else if (a >>= s) {
      // [x, y, x] with y -> x: one x.
      if (s->length() != 3 || (*s)[0].in() != (*s)[2].in() || !(*s)[1].in() ||
          (*s)[1]->next() != (*s)[0].in()) {
        delete r;
        throw CORBA::BAD_PARAM(2, CORBA::COMPLETED_NO);
      }
      ValInterop::NodeSeq out(*s);
      out[0]->id(out[0]->id() + 1000);
      *r <<= out;
    } else if (a >>= b) {
      if (!b) {
        delete r;
        throw CORBA::BAD_PARAM(3, CORBA::COMPLETED_NO);
      }
      std::string t = b->_value();
      t += "!";
      ValInterop::StrBox_var back = new ValInterop::StrBox(t.c_str());
      *r <<= back.in();
    } else {
      delete r;
      throw CORBA::BAD_PARAM(4, CORBA::COMPLETED_NO);
    }
    return r;
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
    AnyEchoImpl* any_impl = new AnyEchoImpl;
    PortableServer::ObjectId_var any_id = root->activate_object(any_impl);
    CORBA::Object_var any_ref = root->id_to_reference(any_id);
    CORBA::String_var any_ior = orb->object_to_string(any_ref);
    std::cout << "ANYECHO " << any_ior << std::endl;
    AnythingImpl* anything = new AnythingImpl;
    PortableServer::ObjectId_var anything_id = root->activate_object(anything);
    CORBA::Object_var anything_ref = root->id_to_reference(anything_id);
    CORBA::String_var anything_ior = orb->object_to_string(anything_ref);
    std::cout << "ANYTHING " << anything_ior << std::endl;
    std::cout << "READY" << std::endl;
    orb->run();
  } catch (CORBA::Exception& e) {
    std::cerr << "values_server: " << e._name() << std::endl;
    return 1;
  }
  return 0;
}
