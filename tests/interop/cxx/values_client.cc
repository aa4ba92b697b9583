// omniORB client of a Peregrine ValInterop::Values (tests/values.rs):
// argv[1] is the IOR, argv[2] that of a ValInterop::Anything. Prints one "OK <step>" line per check that passed,
// "FAIL <step>" and exits 1 otherwise.

#include <cstring>
#include <iostream>
#include "values_common.h"

static int failures = 0;

// omniORB's OBV initializing constructors and sequence elements adopt the
// reference they are given: hand them one of their own.
template <class T>
static T* dup(T* p) {
  CORBA::add_ref(p);
  return p;
}

static void check(bool ok, const char* step) {
  std::cout << (ok ? "OK " : "FAIL ") << step << std::endl;
  if (!ok) failures++;
}

int main(int argc, char** argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    register_factories(orb);
    CORBA::ValueFactoryBase_var f = new Factory<OBV_ValInterop::CxxDerived>();
    orb->register_value_factory("IDL:ValInterop/CxxDerived:1.0", f);
    CORBA::Object_var o = orb->string_to_object(argv[1]);
    ValInterop::Values_var v = ValInterop::Values::_narrow(o);

    // a -> b -> a.
    ValInterop::Node_var a = new OBV_ValInterop::Node(1, "a", 0);
    ValInterop::Node_var b = new OBV_ValInterop::Node(2, "b", dup(a.in()));
    a->next(b);
    ValInterop::Node_var back = v->echo_node(a);
    ValInterop::Node* b2 = back->next();
    check(back->id() == 1 && !strcmp(back->label(), "a") && b2 && b2->id() == 2 &&
              b2->next() == back.in(),
          "cycle");
    // Break the cycles so the values can be released.
    a->next(0);
    back->next(0);

    // [x, y, x] with y -> x, and a null.
    ValInterop::Node_var x = new OBV_ValInterop::Node(3, "x", 0);
    ValInterop::Node_var y = new OBV_ValInterop::Node(4, "y", dup(x.in()));
    ValInterop::NodeSeq s;
    s.length(4);
    s[0] = dup(x.in());
    s[1] = dup(y.in());
    s[2] = dup(x.in());
    ValInterop::NodeSeq_var r = v->echo_seq(s);
    check(r->length() == 4 && r[0].in() == r[2].in() && r[1]->next() == r[0].in() &&
              r[3].in() == 0 && r[0]->id() == 3,
          "sharing");

    ValInterop::StrBox_var box = new ValInterop::StrBox("boxed");
    ValInterop::StrBox_var rb = v->echo_box(box);
    check(rb.in() && !strcmp(rb->_value(), "boxed"), "box");
    ValInterop::StrBox_var nb = v->echo_box(0);
    check(nb.in() == 0, "null box");

    // A derived value Peregrine does not know, truncated to Base there.
    ValInterop::Node_var link = new OBV_ValInterop::Node(5, "link", 0);
    ValInterop::Base_var d = new OBV_ValInterop::CxxDerived(41, "cxx only", dup(link.in()));
    check(v->base_a(d) == 41, "truncated");
    check(v->base_a(0) == -1, "null base");

    ValInterop::Base_var made = v->make_base(7);
    check(made.in() && made->a() == 7, "made");

    // ValueBase: any value.
    CORBA::Object_var ao = orb->string_to_object(argv[2]);
    ValInterop::Anything_var any = ValInterop::Anything::_narrow(ao);
    ValInterop::Node_var n7 = new OBV_ValInterop::Node(7, "seven", 0);
    ValInterop::Base_var b8 = new OBV_ValInterop::Base(8);
    ValInterop::StrBox_var s9 = new ValInterop::StrBox("nine");
    CORBA::String_var k1 = any->kind(n7.in());
    CORBA::String_var k2 = any->kind(b8.in());
    CORBA::String_var k3 = any->kind(s9.in());
    CORBA::String_var k4 = any->kind(0);
    check(!strcmp(k1, "Node 7") && !strcmp(k2, "Base 8") && !strcmp(k3, "StrBox nine") &&
              !strcmp(k4, "null"),
          "valuebase kinds");
    // The derived value Peregrine does not know, cut down to its Base.
    CORBA::String_var k5 = any->kind(d.in());
    check(!strcmp(k5, "Base 41"), "valuebase truncated");
    CORBA::ValueBase_var e = any->echo_value(n7.in());
    ValInterop::Node* en = ValInterop::Node::_downcast(e.in());
    check(en && en->id() == 7 && !strcmp(en->label(), "seven"), "valuebase echo");
    CORBA::ValueBase_var same_b;
    CORBA::Boolean one = any->same(b8.in(), b8.in(), same_b.out());
    ValInterop::Base* sb = ValInterop::Base::_downcast(same_b.in());
    CORBA::ValueBase_var other_b;
    CORBA::Boolean two = any->same(b8.in(), n7.in(), other_b.out());
    check(one && !two && sb && sb->a() == 8, "valuebase shared");
    // A bag listing a node and itself: a cycle through a
    // sequence<ValueBase>, closed on the Peregrine side and sent back.
    ValInterop::ValueSeq items;
    items.length(2);
    CORBA::add_ref(n7.in());
    items[0] = n7.in();
    ValInterop::Bag_var bag = new OBV_ValInterop::Bag("b", items);
    CORBA::add_ref(bag.in());
    bag->items()[1] = bag.in();
    CORBA::String_var k6 = any->kind(bag.in());
    CORBA::ValueBase_var eb = any->echo_value(bag.in());
    ValInterop::Bag* bag2 = ValInterop::Bag::_downcast(eb.in());
    check(!strcmp(k6, "Bag b 2 self 1") && bag2 && bag2 != bag.in() &&
              bag2->items().length() == 2 && bag2->items()[1].in() == eb.in() &&
              ValInterop::Node::_downcast(bag2->items()[0].in()) != 0,
          "valuebase bag cycle");
    // Break both cycles so the bags are freed.
    bag->items()[1] = 0;
    bag2->items()[1] = 0;
    // A graph whose back edges stand in structs: a -1-> b, b -2-> a,
    // a -3-> a, closed on the Peregrine side and sent back.
    ValInterop::GEdges ae, be;
    ae.length(2);
    be.length(1);
    ae[0].weight = 1;
    ae[1].weight = 3;
    be[0].weight = 2;
    ValInterop::GNode_var ga = new OBV_ValInterop::GNode("a", ae);
    ValInterop::GNode_var gb = new OBV_ValInterop::GNode("b", be);
    CORBA::add_ref(gb.in());
    ga->edges()[0].target = gb.in();
    CORBA::add_ref(ga.in());
    ga->edges()[1].target = ga.in();
    CORBA::add_ref(ga.in());
    gb->edges()[0].target = ga.in();
    CORBA::String_var k7 = any->kind(ga.in());
    CORBA::ValueBase_var eg = any->echo_value(ga.in());
    ValInterop::GNode* ga2 = ValInterop::GNode::_downcast(eg.in());
    ValInterop::GNode* gb2 = ga2 && ga2->edges().length() == 2
                                 ? ga2->edges()[0].target.in()
                                 : 0;
    check(!strcmp(k7, "GNode a 1:b[root] 3:root") && ga2 && ga2 != ga.in() &&
              gb2 && gb2->edges().length() == 1 &&
              ga2->edges()[1].target.in() == ga2 &&
              gb2->edges()[0].target.in() == ga2 &&
              describe_gnode(ga2) == "GNode a 1:b[root] 3:root",
          "valuebase graph cycle");
    // Break the cycles so the graphs are freed.
    ga->edges()[1].target = 0;
    gb->edges()[0].target = 0;
    if (ga2) {
      ga2->edges()[1].target = 0;
      if (gb2) gb2->edges()[0].target = 0;
    }
    orb->destroy();
  } catch (CORBA::Exception& e) {
    std::cout << "FAIL exception " << e._name() << std::endl;
    return 1;
  }
  return failures ? 1 : 0;
}
