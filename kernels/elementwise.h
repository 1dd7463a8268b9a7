// Element-wise arithmetic on raw buffers of a DType: what the vector unit computes and what
// the golden reference computes, so both round FP16 the same way.
#pragma once

#include <cstdint>

#include "kernels/api.h"

namespace ars {

float half_to_float(std::uint16_t h);
std::uint16_t float_to_half(float f);  // round to nearest even

double load_element(const std::uint8_t* data, DType dtype, std::uint64_t index);
void store_element(std::uint8_t* data, DType dtype, std::uint64_t index, double value);

// acc[i] = op(acc[i], other[i]) for i < count, computed in the dtype's own precision.
void reduce_elements(ReduceOp op, DType dtype, std::uint8_t* acc, const std::uint8_t* other,
                     std::uint64_t count);

}  // namespace ars
