// NCHW16c: the channel-blocked layout Convs hand to one another, set by the
// optimizer's conv_blocked_layout pass as FusedConv's layout attributes
// (output_layout on the producer, input_layout or residual_layout on its
// readers; schema/fused.cc). Element (n, c, h, w) of a [N, C, H, W] tensor lives at
//   ((n * C / 16 + c / 16) * H * W + h * W + w) * 16 + c % 16.
// A 1x1 Conv run as the transposed product Y^T = X^T W^T reads X^T from
// such blocks in place and stores Y^T into them (sgemm.h's a_block_stride,
// c_block_stride), with no packing of X on every run; the depthwise and
// Winograd kernels, which work on blocks of channels, fill them by row
// copies instead of transposes. The tensor's shape stays [N, C, H, W]; C
// must be a multiple of 16. Only Convs read it (the pass checks that every
// reader takes it blocked and that it is no graph output).
#pragma once

#include <cstdint>

#include "schema/fused.h"

namespace sy::cpu {

// The layout attributes' values: on the producing FusedConv, output_layout
// says its Y is written in kNchw16c; on a consuming one, input_layout that
// its X arrives so. residual_layout = kNchw16c says the residual (input 3)
// arrives so: required when the Conv's Y is blocked (the GEMM adds it as
// it stores Y); with an NCHW Y, the last Conv of a blocked region, it is
// converted on the way.
inline constexpr const char* kNchw16c = kLayoutNchw16c;
inline constexpr int64_t kLayoutBlock = 16;

// From this many output positions (a 14x14 map) the Convs of a blocked
// chain share their maps out among the threads by position (rows), not by
// channel: the 1x1 products by rows of Y^T (GemmEpilogue::split_rows_only),
// the depthwise ones by bands of rows. Each thread then reads mostly what
// it wrote itself, which matters where the cores have no cache in common
// (vCPUs on different core complexes): MobileNetV2 at 2 threads ran 8.0 ms
// there against 4.2 with a shared cache, and 6.0 / 4.1 with this split.
inline constexpr int64_t kSpatialSplitPositions = 196;

}  // namespace sy::cpu
