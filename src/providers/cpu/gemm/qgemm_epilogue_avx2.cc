// The 8-bit GEMM's row epilogue compiled for avx2 (see qgemm_epilogue.h).
#include <cstring>
#include <utility>

#include "providers/cpu/gemm/qgemm.h"
#include "providers/cpu/gemm/qgemm_epilogue.h"

namespace sy::cpu::qgemm_epilogue_detail {
namespace avx2 {
constexpr int kLanes = 8;
#include "providers/cpu/gemm/qgemm_epilogue_body.h"
}  // namespace avx2

const QgemmEpilogueSimd& simd_avx2() { return avx2::kQgemmEpilogueSimd; }

}  // namespace sy::cpu::qgemm_epilogue_detail
