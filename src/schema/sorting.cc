// PLACEHOLDER: replaced by the real schema table for this family (TopK, Unique, CumSum, CumProd, Dropout).
#include "schema/schema_tables.h"

namespace sy {

std::span<const OpSchema> sorting_schemas() { return {}; }

}  // namespace sy
