// spec_check: a tiny private driver for the front end's tests: `spec_check FILE...` runs
// load_kernels on each file, prints diagnostics to stderr and a one-line summary per kernel to
// stdout, and exits 1 if any file had an error (the contract of `tilegen check`).
#include "spec/Frontend.h"

#include <iostream>

int main(int argc, char** argv) {
  int rc = 0;
  for (int i = 1; i < argc; ++i) {
    tilegen::DiagEngine diag(std::cerr);
    auto ks = tilegen::spec::load_kernels(argv[i], diag);
    if (!ks || diag.has_errors()) {
      rc = 1;
      continue;
    }
    for (const auto& k : *ks)
      std::cout << k.name << " " << k.type_suffix() << "\n";
  }
  return rc;
}
