#include "schema/op_versions.h"

namespace sy {
namespace {

constexpr OpVersion kOpVersions[] = {
#include "schema/op_versions.inc"
};

}  // namespace

std::span<const OpVersion> all_op_versions() { return kOpVersions; }

std::string_view normalize_domain(std::string_view domain) { return domain == "ai.onnx" ? std::string_view() : domain; }

int resolve_op_version(std::string_view domain, std::string_view op_type, int64_t opset) {
  domain = normalize_domain(domain);
  int best = 0;
  for (const OpVersion& v : kOpVersions)
    if (v.domain == domain && v.op_type == op_type && v.since_version <= opset && v.since_version > best)
      best = v.since_version;
  return best;
}

int first_op_version(std::string_view domain, std::string_view op_type) {
  domain = normalize_domain(domain);
  int first = 0;
  for (const OpVersion& v : kOpVersions)
    if (v.domain == domain && v.op_type == op_type && (first == 0 || v.since_version < first)) first = v.since_version;
  return first;
}

int newest_opset(std::string_view domain) {
  domain = normalize_domain(domain);
  int newest = 0;
  for (const OpVersion& v : kOpVersions)
    if (v.domain == domain && v.since_version > newest) newest = v.since_version;
  return newest;
}

}  // namespace sy
