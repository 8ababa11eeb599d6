// The schema tables, one per op family. A family is a file in src/schema/
// that defines, in sy and at the start of a line,
//   std::span<const OpSchema> <family>_schemas() {
// beside its inference functions. The build finds these definitions and
// generates schema_families() (cmake/table_list.cmake), so adding a family
// is writing its file.
#pragma once

#include <span>

#include "schema/schema.h"

namespace sy {

using SchemaTableFunction = std::span<const OpSchema> (*)();

// Every family's table function, ordered by the family's name.
std::span<const SchemaTableFunction> schema_families();

}  // namespace sy
