#include "schema/op_versions.h"

#include <algorithm>
#include <tuple>

namespace sy {
namespace {

constexpr OpVersion kOpVersions[] = {
#include "schema/op_versions.inc"
};

constexpr bool key_less(const OpVersion& a, const OpVersion& b) {
  return std::tie(a.domain, a.op_type, a.since_version) < std::tie(b.domain, b.op_type, b.since_version);
}

// Lookups are binary searches, once per node of every model loaded.
static_assert(std::is_sorted(std::begin(kOpVersions), std::end(kOpVersions), key_less),
              "op_versions.inc must be sorted by (domain, op_type, since_version)");

// Every version of one op, oldest first.
std::span<const OpVersion> versions_of(std::string_view domain, std::string_view op_type) {
  auto op_less = [](const OpVersion& a, const OpVersion& b) {
    return std::tie(a.domain, a.op_type) < std::tie(b.domain, b.op_type);
  };
  const OpVersion key{normalize_domain(domain), op_type, 0, {}};
  const auto [first, last] = std::equal_range(std::begin(kOpVersions), std::end(kOpVersions), key, op_less);
  return {first, last};
}

}  // namespace

std::span<const OpVersion> all_op_versions() { return kOpVersions; }

std::string_view normalize_domain(std::string_view domain) { return domain == "ai.onnx" ? std::string_view() : domain; }

int resolve_op_version(std::string_view domain, std::string_view op_type, int64_t opset) {
  int best = 0;
  for (const OpVersion& v : versions_of(domain, op_type))
    if (v.since_version <= opset) best = v.since_version;
  return best;
}

int first_op_version(std::string_view domain, std::string_view op_type) {
  const std::span<const OpVersion> versions = versions_of(domain, op_type);
  return versions.empty() ? 0 : versions.front().since_version;
}

int newest_opset(std::string_view domain) {
  domain = normalize_domain(domain);
  int newest = 0;
  for (const OpVersion& v : kOpVersions)
    if (v.domain == domain && v.since_version > newest) newest = v.since_version;
  return newest;
}

const OpVersion* find_op_version(std::string_view domain, std::string_view op_type, int since_version) {
  for (const OpVersion& v : versions_of(domain, op_type))
    if (v.since_version == since_version) return &v;
  return nullptr;
}

bool accepts_attribute(const OpVersion& version, std::string_view name) {
  std::string_view rest = version.attributes;
  while (!rest.empty()) {
    const size_t end = std::min(rest.find(' '), rest.size());
    if (rest.substr(0, end) == name) return true;
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
  return false;
}

}  // namespace sy
