#include "kernels/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ars {

std::size_t dtype_bytes(DType dtype) {
  return dtype == DType::FP32 ? 4 : 2;
}

const char* to_string(DType dtype) {
  return dtype == DType::FP32 ? "fp32" : "fp16";
}

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Min:
      return "min";
    case ReduceOp::Prod:
      return "prod";
  }
  return "?";
}

const char* to_string(NotifyOp op) {
  return op == NotifyOp::AtomicAdd ? "AtomicAdd" : "Set";
}

const char* to_string(WaitCmp cmp) {
  return cmp == WaitCmp::Eq ? "Eq" : "Ge";
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1f;
  std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | ((113 - shift) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint16_t float_to_half(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);
  }
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to infinity
  if (abs < 0x38800000u) {                        // subnormal or zero in half
    if (abs < 0x33000000u) return sign;           // below half of the smallest subnormal
    const std::uint32_t exponent = abs >> 23;
    const std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126 - exponent;  // 14..24
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1);
    const std::uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1u))) ++half;
    return sign | static_cast<std::uint16_t>(half);
  }
  std::uint32_t half = ((abs >> 13) - (112u << 10));
  const std::uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return sign | static_cast<std::uint16_t>(half);
}

double load_element(const std::uint8_t* data, DType dtype, std::uint64_t index) {
  if (dtype == DType::FP32) {
    float f;
    std::memcpy(&f, data + index * 4, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, data + index * 2, 2);
  return half_to_float(h);
}

void store_element(std::uint8_t* data, DType dtype, std::uint64_t index, double value) {
  const float f = static_cast<float>(value);
  if (dtype == DType::FP32) {
    std::memcpy(data + index * 4, &f, 4);
  } else {
    const std::uint16_t h = float_to_half(f);
    std::memcpy(data + index * 2, &h, 2);
  }
}

namespace {

// One loop per operation, so the compiler vectorises the FP32 case instead of switching on the
// operation for every element.
template <typename Op>
void reduce_with(Op op, DType dtype, std::uint8_t* acc, const std::uint8_t* other,
                 std::uint64_t count) {
  if (dtype == DType::FP32) {
    float* a = reinterpret_cast<float*>(acc);
    const float* b = reinterpret_cast<const float*>(other);
    for (std::uint64_t i = 0; i < count; ++i) a[i] = op(a[i], b[i]);
    return;
  }
  auto* a = reinterpret_cast<std::uint16_t*>(acc);
  const auto* b = reinterpret_cast<const std::uint16_t*>(other);
  for (std::uint64_t i = 0; i < count; ++i) {
    a[i] = float_to_half(op(half_to_float(a[i]), half_to_float(b[i])));
  }
}

}  // namespace

void reduce_elements(ReduceOp op, DType dtype, std::uint8_t* acc, const std::uint8_t* other,
                     std::uint64_t count) {
  switch (op) {
    case ReduceOp::Sum:
      return reduce_with([](float x, float y) { return x + y; }, dtype, acc, other, count);
    case ReduceOp::Max:
      return reduce_with([](float x, float y) { return std::max(x, y); }, dtype, acc, other, count);
    case ReduceOp::Min:
      return reduce_with([](float x, float y) { return std::min(x, y); }, dtype, acc, other, count);
    case ReduceOp::Prod:
      return reduce_with([](float x, float y) { return x * y; }, dtype, acc, other, count);
  }
}

}  // namespace ars
