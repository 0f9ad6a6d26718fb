// Exercise m7-mse-calibration: the calibration method "mse", the clipping range of least
// squared error (README.md beside this file says what it must do).
//
// Chapter: docs/module7-quantisation.md#4-quantising-a-float-model-minic-quantize
#include "minic/quantize/calibration.h"

namespace minic {
namespace {

// The range to quantise `values` to. As given it is minmax's, the extremes; the task is
// the range, among the extremes shrunk towards 0, whose uint8 quantisation of
// values.samples has the least mean squared error.
std::pair<double, double> choose_mse_range(const ObservedValues& values,
                                           const QuantizeOptions& options) {
  return {values.min, values.max};
}

}  // namespace

MINIC_REGISTER_CALIBRATION("mse", choose_mse_range,
                           "the clipping range of least squared error, exercise "
                           "m7-mse-calibration");

}  // namespace minic
