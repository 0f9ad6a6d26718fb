/* A C program that calls a kernel compiled by `minic compile` (tests/lit/cli/compile.test):
   Z = A + B, with B broadcast over the rows of A. */
#include <stdio.h>

#include "kernels.h"

int main(void) {
  float a[6] = {1, 2, 3, 4, 5, 6};
  float b[3] = {0.5f, -1, 10};
  float z[6] = {0};
  void* args[3] = {a, b, z};
  minic_kernel_add0(args);
  for (int i = 0; i < 6; ++i) printf("%g\n", z[i]);
  return 0;
}
