// NCHW16c: the channel-blocked layout a 1x1 Conv hands to the depthwise Conv
// that reads it (MobileNet's expansion -> depthwise), and the depthwise Conv
// to the 1x1 Conv that reads it (depthwise -> projection), set by the
// optimizer's conv_blocked_layout pass as a pair of attributes.
//
// The depthwise kernel works on blocks of 16 channels, each position one
// vector; from NCHW it first transposes every block into that form, which
// cost as much as a third of a 14x14 layer. The 1x1 conv, run as the
// transposed product Y^T = X^T W^T, produces rows of channels per position
// anyway, and its GEMM stores them straight into blocks (sgemm.h's
// c_block_stride): element (n, c, h, w) of a [N, C, H, W] tensor lives at
//   ((n * C / 16 + c / 16) * H * W + h * W + w) * 16 + c % 16,
// so the depthwise kernel only copies rows. Its outputs, one vector of 16
// channels per position, are such blocks too, and the projection's GEMM
// transposes them as it packs its operand (sgemm.h's a_block_stride and
// b_block_stride) instead of the depthwise kernel transposing them into
// NCHW first. The tensor's shape stays
// [N, C, H, W]; C must be a multiple of 16. Nothing but the marked consumer
// reads it (the pass checks it has no other reader and is no graph output).
#pragma once

#include <cstdint>

namespace sy::cpu {

// On the producing Conv: its output Y is written in kNchw16c.
inline constexpr const char* kOutputLayoutAttr = "sy_output_layout";
// On the consuming depthwise Conv: its input X arrives in kNchw16c.
inline constexpr const char* kInputLayoutAttr = "sy_input_layout";
inline constexpr const char* kNchw16c = "NCHW16c";
inline constexpr int64_t kLayoutBlock = 16;

}  // namespace sy::cpu
