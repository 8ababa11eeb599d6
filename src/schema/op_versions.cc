#include "schema/op_versions.h"

#include <algorithm>
#include <tuple>

#include "schema/fused.h"

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

// The table holding a domain's ops: the spec's, or Switchyard's own
// (schema/fused.cc), which the generated file cannot hold.
std::span<const OpVersion> table_of(std::string_view domain) {
  if (domain == kSwitchyardDomain) return switchyard_op_versions();
  return kOpVersions;
}

// Every version of one op, oldest first.
std::span<const OpVersion> versions_of(std::string_view domain, std::string_view op_type) {
  auto op_less = [](const OpVersion& a, const OpVersion& b) {
    return std::tie(a.domain, a.op_type) < std::tie(b.domain, b.op_type);
  };
  const OpVersion key{normalize_domain(domain), op_type, 0, {}, {}, {}};
  const std::span<const OpVersion> table = table_of(key.domain);
  const auto [first, last] = std::equal_range(table.begin(), table.end(), key, op_less);
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
  for (const OpVersion& v : table_of(domain))
    if (v.domain == domain && v.since_version > newest) newest = v.since_version;
  return newest;
}

const OpVersion* find_op_version(std::string_view domain, std::string_view op_type, int since_version) {
  for (const OpVersion& v : versions_of(domain, op_type))
    if (v.since_version == since_version) return &v;
  return nullptr;
}

namespace {

// Calls visit(name, type) for each "name:type" of the version's list.
template <typename Visit>
void for_each_listed(const OpVersion& version, Visit&& visit) {
  std::string_view rest = version.attributes;
  while (!rest.empty()) {
    const size_t end = std::min(rest.find(' '), rest.size());
    const std::string_view item = rest.substr(0, end);
    const size_t colon = std::min(item.find(':'), item.size());
    if (visit(item.substr(0, colon), item.substr(std::min(colon + 1, item.size())))) return;
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
}

}  // namespace

std::string_view listed_attribute_type(const OpVersion& version, std::string_view name) {
  std::string_view found;
  for_each_listed(version, [&](std::string_view n, std::string_view type) {
    if (n != name) return false;
    found = type;
    return true;
  });
  return found;
}

std::string listed_attribute_names(const OpVersion& version) {
  std::string names;
  for_each_listed(version, [&](std::string_view n, std::string_view) {
    names += (names.empty() ? "" : ",") + std::string(n);
    return false;
  });
  return names;
}

}  // namespace sy
