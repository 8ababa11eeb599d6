// Every op version the runtime has a schema for can run somewhere, or
// unimplemented_ops.txt says why not. A kernel family left out of the
// build's collected tables, or a schema added without a kernel, fails here
// by name. The other way round, a kernel without a schema (a schema family
// left out), fails SchemaCoverage.EveryCpuKernelVersionHasAnInferenceFunction
// and the unimplemented lines whose schemas are gone fail here.
//
// "Somewhere" is the CPU provider: it runs every op Switchyard implements
// (cpu_provider.h), and tests/cuda/cpu_covers_cuda_test.cc holds the CUDA
// table to that, so a CUDA kernel never covers what the CPU's do not. That
// test runs in cuda_host_tests, which links the CUDA sources; this binary
// does not.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "providers/cpu/cpu_provider.h"
#include "schema/fused.h"
#include "schema/op_versions.h"
#include "schema/schema_tables.h"

namespace sy {
namespace {

// One op version: "" is ai.onnx.
using OpKey = std::tuple<std::string, std::string, int>;

std::string describe(const OpKey& key) {
  const auto& [domain, op_type, version] = key;
  return (domain.empty() ? "ai.onnx" : domain) + " " + op_type + " " + std::to_string(version);
}

// The spec's versions of an op (op_versions.inc, or schema/fused.cc for
// com.switchyard) in [first, last].
std::vector<int> spec_versions(std::string_view domain, std::string_view op_type, int first, int last) {
  std::vector<int> versions;
  for (std::span<const OpVersion> table : {all_op_versions(), switchyard_op_versions()})
    for (const OpVersion& v : table)
      if (v.domain == domain && v.op_type == op_type && v.since_version >= first && v.since_version <= last)
        versions.push_back(v.since_version);
  return versions;
}

// Every schema entry of every family, with the op versions it stands for:
// the spec's from its since_version up to the next entry's (find_schema's
// rule). An entry the spec has no version for stands for its own.
std::set<OpKey> schema_op_versions() {
  std::vector<const OpSchema*> schemas;
  for (SchemaTableFunction family : schema_families())
    for (const OpSchema& s : family()) schemas.push_back(&s);
  std::set<OpKey> keys;
  for (const OpSchema* s : schemas) {
    int next = kLatestVersion;
    for (const OpSchema* other : schemas)
      if (other->domain == s->domain && other->op_type == s->op_type && other->since_version > s->since_version &&
          other->since_version < next)
        next = other->since_version;
    std::vector<int> versions = spec_versions(s->domain, s->op_type, s->since_version, next - 1);
    if (versions.empty()) versions.push_back(s->since_version);
    for (int v : versions) keys.insert({std::string(s->domain), std::string(s->op_type), v});
  }
  return keys;
}

bool cpu_kernel_covers(const OpKey& key) {
  const auto& [domain, op_type, version] = key;
  for (const KernelDef& def : cpu::cpu_kernel_registry().defs())
    if (def.domain == domain && def.op_type == op_type && def.since_version <= version && version <= def.end_version)
      return true;
  return false;
}

// unimplemented_ops.txt: "<domain> <op_type> <version>  # why" a line.
// Malformed lines are returned in `errors`.
std::set<OpKey> read_unimplemented(const std::string& path, std::vector<std::string>& errors) {
  std::set<OpKey> keys;
  std::ifstream in(path);
  if (!in) {
    errors.push_back("cannot open " + path);
    return keys;
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const size_t hash = line.find('#');
    const bool has_reason = hash != std::string::npos && line.find_first_not_of(" \t", hash + 1) != std::string::npos;
    std::istringstream fields(line.substr(0, hash));
    std::string domain, op_type, extra;
    int version = 0;
    if (!(fields >> domain)) continue;  // blank or comment only
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (!(fields >> op_type >> version) || (fields >> extra) || version <= 0) {
      errors.push_back(where + "want '<domain> <op_type> <version>  # why', got '" + line + "'");
      continue;
    }
    if (!has_reason) errors.push_back(where + "no '# why' for " + op_type);
    const OpKey key{domain == "ai.onnx" ? "" : domain, op_type, version};
    if (!keys.insert(key).second) errors.push_back(where + describe(key) + " is listed twice");
  }
  return keys;
}

TEST(KernelCoverage, EverySchemaHasAKernelOrIsListedAsUnimplemented) {
  std::vector<std::string> errors;
  const std::set<OpKey> unimplemented = read_unimplemented(SY_UNIMPLEMENTED_OPS, errors);
  const std::set<OpKey> schemas = schema_op_versions();
  ASSERT_FALSE(schemas.empty());
  std::string uncovered, stale, unknown;
  for (const OpKey& key : schemas) {
    const bool covered = cpu_kernel_covers(key);
    const bool listed = unimplemented.count(key) > 0;
    if (!covered && !listed) uncovered += "\n  " + describe(key);
    if (covered && listed) stale += "\n  " + describe(key);
  }
  for (const OpKey& key : unimplemented)
    if (schemas.count(key) == 0) unknown += "\n  " + describe(key);
  for (const std::string& e : errors) ADD_FAILURE() << e;
  EXPECT_TRUE(uncovered.empty()) << "op versions with a schema but no kernel (write the kernel, or list the op "
                                    "version in tests/unit/schema/unimplemented_ops.txt with the reason):"
                                 << uncovered;
  EXPECT_TRUE(stale.empty()) << "listed in unimplemented_ops.txt but a kernel runs them now (remove the lines):"
                             << stale;
  EXPECT_TRUE(unknown.empty()) << "listed in unimplemented_ops.txt but no schema stands for them:" << unknown;
}

}  // namespace
}  // namespace sy
