// Classifies the held-out 8x8 digits with the CNN that train.py exported,
// using only the public API.
//
//   classify_digits [folder]     (default: examples/digits)
//
// The folder holds digits_cnn.onnx, test_images.npy (float [N,1,8,8]) and
// test_labels.npy (int64 [N]). Exits non-zero on any error, or when fewer
// than 90% of the images are classified correctly.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "switchyard/npy.h"
#include "switchyard/session.h"

namespace {

constexpr double kMinAccuracy = 0.90;
constexpr int64_t kClasses = 10;

int report_error(const sy::Status& status) {
  std::fprintf(stderr, "classify_digits: %s\n", status.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [folder with digits_cnn.onnx, test_images.npy, test_labels.npy]\n", argv[0]);
    return 2;
  }
  const std::string folder = argc == 2 ? argv[1] : "examples/digits";

  auto session = sy::Session::create(folder + "/digits_cnn.onnx");
  if (!session.ok()) return report_error(session.status());
  auto images = sy::load_npy(folder + "/test_images.npy");
  if (!images.ok()) return report_error(images.status());
  auto labels = sy::load_npy(folder + "/test_labels.npy");
  if (!labels.ok()) return report_error(labels.status());

  if (labels->dtype() != sy::DataType::kInt64 || labels->shape().rank() != 1 || images->shape().rank() != 4 ||
      images->shape()[0] != labels->shape()[0]) {
    return report_error(sy::invalid_argument("expected images [N,1,8,8] and int64 labels [N]; got " +
                                             images->describe() + " and " + labels->describe()));
  }
  const int64_t count = labels->shape()[0];

  // The whole test set goes through as one batch.
  const auto start = std::chrono::steady_clock::now();
  auto outputs = (*session)->run({{"image", *images}}, {"logits"});
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!outputs.ok()) return report_error(outputs.status());

  const sy::Tensor& logits = outputs->at(0);
  if (logits.dtype() != sy::DataType::kFloat || logits.shape() != sy::Shape{count, kClasses})
    return report_error(sy::runtime_error("expected logits float[" + std::to_string(count) + "," +
                                          std::to_string(kClasses) + "]; got " + logits.describe()));

  const float* scores = logits.data<float>();
  const int64_t* truth = labels->data<int64_t>();
  int64_t correct = 0;
  for (int64_t i = 0; i < count; ++i) {
    const float* row = scores + i * kClasses;
    int64_t best = 0;
    for (int64_t c = 1; c < kClasses; ++c)
      if (row[c] > row[best]) best = c;
    if (best == truth[i]) ++correct;
  }
  const double accuracy = count > 0 ? static_cast<double>(correct) / static_cast<double>(count) : 0.0;
  std::printf("digits: %lld/%lld correct (%.1f%%) on held-out images, %.1f ms\n", static_cast<long long>(correct),
              static_cast<long long>(count), 100.0 * accuracy, ms);
  if (accuracy < kMinAccuracy) {
    std::fprintf(stderr, "classify_digits: accuracy %.3f is below %.2f\n", accuracy, kMinAccuracy);
    return 1;
  }
  return 0;
}
