/* A C program that runs a whole model compiled by `minic compile` through model.h
   (tests/lit/cli/compile.test): the MLP on an input of ones; prints the 10 outputs. */
#include <stdio.h>

#include "model.h"

int main(int argc, char** argv) {
  if (argc != 2 || minic_model_init(argv[1]) != 0) {
    fprintf(stderr, "cannot load the weights\n");
    return 1;
  }
  static float input[784];
  float output[10];
  for (int i = 0; i < 784; ++i) input[i] = 1.0f;
  void* inputs[1] = {input};
  void* outputs[1] = {output};
  minic_model_run(inputs, outputs);
  for (int i = 0; i < 10; ++i) printf("%.9g\n", output[i]);
  minic_model_free();
  return 0;
}
