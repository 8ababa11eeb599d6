// PLACEHOLDER: replaced by the real schema table for this family (Resize, Upsample, Einsum, Det, MatMulInteger).
#include "schema/schema_tables.h"

namespace sy {

std::span<const OpSchema> image_schemas() { return {}; }

}  // namespace sy
