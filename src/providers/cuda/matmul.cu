// MatMul and Gemm on the GPU through cuBLAS, float32 (TF32 only when
// use_tf32), float16 and bfloat16 (accumulating in float).
//
// cuBLAS is column-major and ONNX row-major: a row-major product
// C[M,N] = A[M,K] B[K,N] is the column-major product C^T = B^T A^T, so each
// call passes B first and swaps M and N; no data is transposed.
#include <string>
#include <vector>

#include "cuda_kernel.h"
#include "cuda_provider.h"
#include "cuda_types.cuh"

namespace sy::cuda {
namespace {

cudaDataType_t blas_type(int32_t dtype) {
  switch (static_cast<DataType>(dtype)) {
    case DataType::kFloat16: return CUDA_R_16F;
    case DataType::kBfloat16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

cublasComputeType_t compute_type(const CudaProvider& p, int32_t dtype) {
  if (dtype == static_cast<int32_t>(DataType::kFloat) && p.options().use_tf32) return CUBLAS_COMPUTE_32F_FAST_TF32;
  return CUBLAS_COMPUTE_32F;
}

// One strided-batched row-major product: for b in [0, batch),
// C_b[M,N] = alpha * op(A_b) op(B_b) + beta * C_b.
Status gemm(KernelRunContext& ctx, int32_t dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
            float alpha, const void* a, int64_t stride_a, const void* b, int64_t stride_b, float beta, void* c,
            int64_t stride_c, int64_t batch) {
  CudaProvider& p = ctx.provider();
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || batch > INT32_MAX)
    return not_implemented("matrix dimensions beyond 2^31 on the GPU");
  const cudaDataType_t t = blas_type(dtype);
  // Leading dimensions must be at least 1 even for an empty K.
  const int lda = static_cast<int>(std::max<int64_t>(1, trans_a ? m : k));
  const int ldb = static_cast<int>(std::max<int64_t>(1, trans_b ? k : n));
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (batch == 1)
    return p.cublas_status(p.libs().cublas.GemmEx(p.cublas(), op_b, op_a, static_cast<int>(n), static_cast<int>(m),
                                                  static_cast<int>(k), &alpha, b, t, ldb, a, t, lda, &beta, c, t,
                                                  static_cast<int>(n), compute_type(p, dtype), CUBLAS_GEMM_DEFAULT),
                           "cublasGemmEx");
  return p.cublas_status(
      p.libs().cublas.GemmStridedBatchedEx(p.cublas(), op_b, op_a, static_cast<int>(n), static_cast<int>(m),
                                           static_cast<int>(k), &alpha, b, t, ldb, stride_b, a, t, lda, stride_a, &beta,
                                           c, t, static_cast<int>(n), stride_c, static_cast<int>(batch),
                                           compute_type(p, dtype), CUBLAS_GEMM_DEFAULT),
      "cublasGemmStridedBatchedEx");
}

class MatMulKernel final : public CudaKernel {
 public:
  MatMulKernel(const KernelCreateInfo& info, Status& status) {
    dtype_ = info.input_dtype(0);
    if (info.input_dtype(1) != dtype_) status = info.unsupported("mixed input types");
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* a = ctx.input(0);
    const TensorRef* b = ctx.input(1);
    if (a->rank() < 1 || b->rank() < 1) return runtime_error("MatMul: inputs must have rank >= 1");
    // numpy.matmul: 1-D A is a row vector, 1-D B a column vector; those
    // dimensions are dropped from the result.
    const int64_t m = a->rank() == 1 ? 1 : a->dim(a->rank() - 2);
    const int64_t k = a->dim(a->rank() - 1);
    const int64_t kb = b->rank() == 1 ? b->dim(0) : b->dim(b->rank() - 2);
    const int64_t n = b->rank() == 1 ? 1 : b->dim(b->rank() - 1);
    if (k != kb) return runtime_error("MatMul: " + a->describe() + " x " + b->describe() + ": inner dimensions differ");
    const int a_batch_rank = a->rank() > 2 ? a->rank() - 2 : 0;
    const int b_batch_rank = b->rank() > 2 ? b->rank() - 2 : 0;
    const int batch_rank = std::max(a_batch_rank, b_batch_rank);
    // Broadcast batch shape, and per input whether its batch is whole
    // (stride M*K) or a single matrix reused (stride 0).
    int64_t out_dims[SY_MAX_RANK];
    int out_rank = 0;
    int64_t batch = 1, a_count = 1, b_count = 1;
    for (int i = 0; i < batch_rank; ++i) {
      const int64_t da = i - (batch_rank - a_batch_rank) >= 0 ? a->dim(i - (batch_rank - a_batch_rank)) : 1;
      const int64_t db = i - (batch_rank - b_batch_rank) >= 0 ? b->dim(i - (batch_rank - b_batch_rank)) : 1;
      if (da != db && da != 1 && db != 1)
        return runtime_error("MatMul: batch dimensions of " + a->describe() + " and " + b->describe() + " do not broadcast");
      out_dims[out_rank++] = std::max(da, db);
      batch *= out_dims[out_rank - 1];
      a_count *= da;
      b_count *= db;
    }
    if (a->rank() > 1) out_dims[out_rank++] = m;
    if (b->rank() > 1) out_dims[out_rank++] = n;
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, dtype_, out_rank, out_dims, y));
    if (y.num_elements() == 0) return ok_status();
    if (k == 0) return cuda_status(cudaMemsetAsync(y.data(), 0, y.byte_size(), ctx.stream()), "MatMul (K = 0)");
    // One strided call covers whole-or-single batches; a batch that
    // broadcasts partly ([2,1] against [1,3]) goes matrix by matrix.
    const bool a_simple = a_count == batch || a_count == 1;
    const bool b_simple = b_count == batch || b_count == 1;
    const size_t es = dtype_size(dtype_);
    if (a_simple && b_simple) {
      // A batch of A against one B is one tall product: fold the batch into M.
      if (b_count == 1 && a_count == batch)
        return gemm(ctx, dtype_, false, false, m * batch, n, k, 1.0f, a->data(), 0, b->data(), 0, 0.0f, y.data(), 0, 1);
      return gemm(ctx, dtype_, false, false, m, n, k, 1.0f, a->data(), a_count == 1 ? 0 : m * k, b->data(),
                  b_count == 1 ? 0 : k * n, 0.0f, y.data(), m * n, batch);
    }
    for (int64_t i = 0; i < batch; ++i) {
      int64_t ai = 0, bi = 0, rest = i, a_stride = 1, b_stride = 1;
      for (int d = batch_rank - 1; d >= 0; --d) {
        const int64_t idx = rest % out_dims[d];
        rest /= out_dims[d];
        const int ad = d - (batch_rank - a_batch_rank), bd = d - (batch_rank - b_batch_rank);
        const int64_t da = ad >= 0 ? a->dim(ad) : 1, db = bd >= 0 ? b->dim(bd) : 1;
        ai += (da == 1 ? 0 : idx) * a_stride;
        bi += (db == 1 ? 0 : idx) * b_stride;
        a_stride *= da;
        b_stride *= db;
      }
      SY_SDK_RETURN_IF_ERROR(gemm(ctx, dtype_, false, false, m, n, k, 1.0f,
                                   static_cast<const char*>(a->data()) + ai * m * k * es, 0,
                                   static_cast<const char*>(b->data()) + bi * k * n * es, 0, 0.0f,
                                   static_cast<char*>(y.data()) + i * m * n * es, 0, 1));
    }
    return ok_status();
  }

 private:
  int32_t dtype_ = 0;
};

// Y[i, j] = C broadcast to [M, N] (C is [N], [1,N], [M,1], [M,N] or a scalar).
template <typename T>
__global__ void broadcast_c_kernel(T* y, const T* c, int64_t m, int64_t n, int64_t c_rows, int64_t c_cols) {
  const int64_t total = m * n;
  for (int64_t i = thread_index(); i < total; i += grid_stride()) {
    const int64_t r = i / n, col = i % n;
    y[i] = c[(c_rows == 1 ? 0 : r) * c_cols + (c_cols == 1 ? 0 : col)];
  }
}

class GemmKernel final : public CudaKernel {
 public:
  GemmKernel(const KernelCreateInfo& info, Status& status) {
    dtype_ = info.input_dtype(0);
    trans_a_ = info.attr_int("transA", 0) != 0;
    trans_b_ = info.attr_int("transB", 0) != 0;
    alpha_ = info.attr_float("alpha", 1.0f);
    beta_ = info.attr_float("beta", 1.0f);
    if (info.input_dtype(1) != dtype_ || (info.has_input(2) && info.input_dtype(2) != dtype_))
      status = info.unsupported("mixed input types");
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* a = ctx.input(0);
    const TensorRef* b = ctx.input(1);
    const TensorRef* c = ctx.input(2);
    if (a->rank() != 2 || b->rank() != 2) return runtime_error("Gemm: A and B must be 2-D");
    const int64_t m = trans_a_ ? a->dim(1) : a->dim(0);
    const int64_t k = trans_a_ ? a->dim(0) : a->dim(1);
    const int64_t kb = trans_b_ ? b->dim(1) : b->dim(0);
    const int64_t n = trans_b_ ? b->dim(0) : b->dim(1);
    if (k != kb) return runtime_error("Gemm: " + a->describe() + " and " + b->describe() + ": inner dimensions differ");
    TensorRef y;
    const int64_t dims[2] = {m, n};
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, dtype_, 2, dims, y));
    if (y.num_elements() == 0) return ok_status();
    float beta = 0.0f;
    if (c != nullptr && beta_ != 0.0f) {
      int64_t rows = 1, cols = 1;
      if (c->rank() == 1) cols = c->dim(0);
      if (c->rank() == 2) {
        rows = c->dim(0);
        cols = c->dim(1);
      }
      if (c->rank() > 2 || (rows != 1 && rows != m) || (cols != 1 && cols != n))
        return runtime_error("Gemm: C " + c->describe() + " does not broadcast to [" + std::to_string(m) + "," +
                             std::to_string(n) + "]");
      dispatch_float_type(dtype_, [&]<typename T>() {
        broadcast_c_kernel<T><<<grid_size(m * n), kThreadsPerBlock, 0, ctx.stream()>>>(y.data<T>(), c->data<const T>(),
                                                                                      m, n, rows, cols);
      });
      SY_SDK_RETURN_IF_ERROR(check_launch("Gemm C broadcast"));
      beta = beta_;
    }
    if (k == 0 && beta == 0.0f) return cuda_status(cudaMemsetAsync(y.data(), 0, y.byte_size(), ctx.stream()), "Gemm (K = 0)");
    // With K = 0 cuBLAS still scales Y (holding C) by beta.
    return gemm(ctx, dtype_, trans_a_, trans_b_, m, n, k, alpha_, a->data(), 0, b->data(), 0, beta, y.data(), 0, 1);
  }

 private:
  int32_t dtype_ = 0;
  bool trans_a_ = false, trans_b_ = false;
  float alpha_ = 1.0f, beta_ = 1.0f;
};

const CudaKernelDef kMatMulDefs[] = {
    {"", "MatMul", 1, kLatest, 0, kFloatTypes, 0, make_kernel<MatMulKernel>},
    {"", "Gemm", 7, kLatest, 0, kFloatTypes, 0, make_kernel<GemmKernel>},
};

}  // namespace

std::span<const CudaKernelDef> matmul_kernel_defs() { return kMatMulDefs; }

}  // namespace sy::cuda
