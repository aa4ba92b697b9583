// omniORB client of Ping: IOR and call count as arguments; warms up with
// 2,000 calls, then prints the median of the timed ones in microseconds.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <vector>
#include "ping.hh"

int main(int argc, char** argv) {
  CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
  if (argc < 3) {
    std::cerr << "usage: client IOR CALLS" << std::endl;
    return 2;
  }
  CORBA::Object_var o = orb->string_to_object(argv[1]);
  Ping_var p = Ping::_narrow(o);
  int n = std::atoi(argv[2]);
  for (int i = 0; i < 2000; i++) p->send_no_params_2way();
  std::vector<double> t(n);
  for (int i = 0; i < n; i++) {
    auto a = std::chrono::steady_clock::now();
    p->send_no_params_2way();
    auto b = std::chrono::steady_clock::now();
    t[i] = std::chrono::duration<double, std::micro>(b - a).count();
  }
  std::sort(t.begin(), t.end());
  std::cout << t[n / 2] << std::endl;
  orb->destroy();
}
