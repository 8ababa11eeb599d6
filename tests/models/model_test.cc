// Runs each exported model on PyTorch's saved inputs and compares every
// output with PyTorch's saved outputs. Layout, as export_all.py writes it:
//   SY_MODELS_DIR/<model>.onnx
//   SY_MODELS_DIR/<model>.inputs/<input name>.npy
//   SY_MODELS_DIR/<model>.expected/<output name>.npy
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "providers/cpu/gemm/sgemm.h"
#include "switchyard/npy.h"
#include "switchyard/session.h"

namespace sy {
namespace {

namespace fs = std::filesystem;

// Max |a - e| over max |e| must stay below this for every output.
constexpr double kMaxRelativeError = 1e-4;
// Per element: |a - e| <= kElementRelative * |e| + kElementFloor * max|e|.
// The floor keeps elements near zero, where relative error means nothing,
// from failing on rounding noise.
constexpr double kElementRelative = 1e-4;
constexpr double kElementFloor = 1e-5;

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// Every .npy in `folder`, named by file stem, sorted by name.
Result<std::vector<NamedTensor>> load_folder(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return Status(StatusCode::kNoSuchFile, "missing folder " + folder.string());
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.path().extension() == ".npy") files.push_back(entry.path());
  if (ec) return Status(StatusCode::kNoSuchFile, "cannot list " + folder.string() + ": " + ec.message());
  if (files.empty()) return Status(StatusCode::kNoSuchFile, "no .npy files in " + folder.string());
  std::sort(files.begin(), files.end());
  std::vector<NamedTensor> out;
  for (const fs::path& f : files) {
    SY_ASSIGN_OR_RETURN(Tensor t, load_npy(f.string()));
    out.push_back({f.stem().string(), std::move(t)});
  }
  return out;
}

struct Comparison {
  double max_abs_error = 0;
  double max_abs_expected = 0;
  double relative_error = 0;
  int64_t bad_elements = 0;  // outside the elementwise bound, NaN included
  int64_t first_bad = -1;
};

template <typename T>
Comparison compare_values(const T* actual, const T* expected, int64_t n) {
  Comparison c;
  for (int64_t i = 0; i < n; ++i) c.max_abs_expected = std::max(c.max_abs_expected, std::abs(double(expected[i])));
  for (int64_t i = 0; i < n; ++i) {
    const double a = double(actual[i]);
    const double e = double(expected[i]);
    const double diff = std::abs(a - e);
    // Written so that a NaN in either fails the bound.
    const bool within = diff <= kElementRelative * std::abs(e) + kElementFloor * c.max_abs_expected;
    if (!within) {
      if (c.first_bad < 0) c.first_bad = i;
      ++c.bad_elements;
    }
    if (std::isnan(diff)) c.max_abs_error = std::numeric_limits<double>::infinity();
    else c.max_abs_error = std::max(c.max_abs_error, diff);
  }
  c.relative_error = c.max_abs_error / std::max(c.max_abs_expected, double(std::numeric_limits<float>::min()));
  return c;
}

double element_as_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat: return t.data<float>()[i];
    case DataType::kDouble: return t.data<double>()[i];
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

class ModelTest : public ::testing::TestWithParam<const char*> {};

// Runs `model` with `options` and compares every output with PyTorch's.
void check_model(const std::string& model, const SessionOptions& options) {
  const char* skip = std::getenv("SWITCHYARD_SKIP_MODEL_TESTS");
  if (skip != nullptr && std::string(skip) == "1") GTEST_SKIP() << "SWITCHYARD_SKIP_MODEL_TESTS=1 is set";

  const fs::path dir(SY_MODELS_DIR);
  const fs::path model_path = dir / (model + ".onnx");
  if (!fs::exists(model_path)) {
    FAIL() << model_path.string() << " does not exist. Export the models first: "
           << "`cmake --build <build dir> --target export_models`, or "
           << "`/usr/bin/python3 bench/models/export_all.py --out " << dir.string() << "`. "
           << "(Set SWITCHYARD_SKIP_MODEL_TESTS=1 to skip these tests.)";
  }
  auto inputs = load_folder(dir / (model + ".inputs"));
  ASSERT_TRUE(inputs.ok()) << inputs.status().to_string() << " (rerun the export script)";
  auto expected = load_folder(dir / (model + ".expected"));
  ASSERT_TRUE(expected.ok()) << expected.status().to_string() << " (rerun the export script)";

  auto session = Session::create(model_path.string(), options);
  ASSERT_TRUE(session.ok()) << session.status().to_string();

  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const NamedTensor& in : *inputs) feeds.emplace_back(in.name, in.tensor);
  std::vector<std::string> output_names;
  for (const NamedTensor& out : *expected) output_names.push_back(out.name);

  const uint64_t plans_missed = cpu::gemm_plans_missed();
  const auto start = std::chrono::steady_clock::now();
  auto outputs = (*session)->run(feeds, output_names);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(outputs.ok()) << outputs.status().to_string();
  // Every GEMM of the model was planned by its kernel's prepare phase.
  EXPECT_EQ(cpu::gemm_plans_missed(), plans_missed) << model << ": GEMMs planned on the hot path";
  ASSERT_EQ(outputs->size(), expected->size());
  std::printf("[ model    ] %s: first run %.1f ms\n", model.c_str(), ms);

  for (size_t k = 0; k < expected->size(); ++k) {
    const std::string& name = (*expected)[k].name;
    const Tensor& want = (*expected)[k].tensor;
    const Tensor& got = (*outputs)[k];
    ASSERT_EQ(got.dtype(), want.dtype()) << model << "/" << name << ": got " << got.describe() << ", expected "
                                         << want.describe();
    ASSERT_EQ(got.shape(), want.shape()) << model << "/" << name << ": got " << got.describe() << ", expected "
                                         << want.describe();
    const int64_t n = want.num_elements();
    Comparison c;
    if (want.dtype() == DataType::kFloat) {
      c = compare_values(got.data<float>(), want.data<float>(), n);
    } else if (want.dtype() == DataType::kDouble) {
      c = compare_values(got.data<double>(), want.data<double>(), n);
    } else {
      // Integer and bool outputs must match exactly.
      EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), want.byte_size()), 0) << model << "/" << name;
      continue;
    }
    std::ostringstream summary;
    summary << model << "/" << name << " " << want.describe() << ": max relative error " << c.relative_error
            << " (max |a-e| " << c.max_abs_error << ", max |e| " << c.max_abs_expected << "), " << c.bad_elements
            << " of " << n << " elements outside |a-e| <= " << kElementRelative << "*|e| + " << kElementFloor
            << "*max|e|";
    if (c.first_bad >= 0)
      summary << "; first at flat index " << c.first_bad << ": got " << element_as_double(got, c.first_bad)
              << ", expected " << element_as_double(want, c.first_bad);
    std::printf("[ model    ] %s\n", summary.str().c_str());
    ::testing::Test::RecordProperty(name + "_max_relative_error", std::to_string(c.relative_error));
    EXPECT_LE(c.relative_error, kMaxRelativeError) << summary.str();
    EXPECT_EQ(c.bad_elements, 0) << summary.str();
  }
}

TEST_P(ModelTest, MatchesPyTorch) { check_model(GetParam(), SessionOptions{}); }

// The same on the GPU, float32 without TF32, with every node that is not
// shape arithmetic on CUDA (a fallthrough is an error).
class CudaModelTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CudaModelTest, MatchesPyTorchOnCuda) {
  const std::vector<std::string> available = available_providers();
  if (std::find(available.begin(), available.end(), "CUDAExecutionProvider") == available.end())
    GTEST_SKIP() << "skipped: no CUDA device";
  SessionOptions options;
  options.providers = {{"cuda", {{"use_tf32", "0"}}}, {"cpu", {}}};
  options.fallback.node_fallthrough = FallbackAction::kError;
  check_model(GetParam(), options);
}

INSTANTIATE_TEST_SUITE_P(Models, ModelTest, ::testing::Values("resnet50", "mobilenetv2", "bert", "gpt2", "lstm", "vad", "textdet", "tree_ensemble"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });
// The models issue 6 names for the GPU (the LSTM has no CUDA kernel yet).
INSTANTIATE_TEST_SUITE_P(Models, CudaModelTest, ::testing::Values("resnet50", "mobilenetv2", "bert", "gpt2"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
}  // namespace sy
