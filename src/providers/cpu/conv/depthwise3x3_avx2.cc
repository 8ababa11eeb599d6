// The depthwise 3x3 body compiled for AVX2+FMA (see depthwise3x3.h).
#include "providers/cpu/conv/depthwise3x3.h"

namespace sy::cpu::depthwise_detail {

void depthwise3x3_avx2(const Depthwise3x3Plane& p)
#include "providers/cpu/conv/depthwise3x3_body.h"

}  // namespace sy::cpu::depthwise_detail
