// Writes synthetic kernels_ref measurements (known parameters, fixed-seed
// noise; testing/synthetic.h) to stdout, for end-to-end tests of
// `zionsim calibrate` without a GPU.

#include <iostream>

#include "calibration/testing/synthetic.h"

int main() {
  std::cout << zx::calibration::testing::synthetic_measurements({});
  return 0;
}
