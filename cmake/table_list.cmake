# sy_add_table_list(<target> OUTPUT <file.cc> SOURCES <files...> HEADER <h>
#                   NAMESPACE <ns> TABLE_TYPE <type> SUFFIX <suffix>
#                   FUNCTION <name> FUNCTION_TYPE <type>)
#
# Adds to <target> a generated <file.cc> that declares every family table
# '<TABLE_TYPE> <family><SUFFIX>()' defined in SOURCES and defines
# 'std::span<const FUNCTION_TYPE> FUNCTION()' listing them by name; HEADER
# declares FUNCTION and FUNCTION_TYPE. The file is rewritten at build time
# whenever a source changes, and SOURCES should come from a CONFIGURE_DEPENDS
# glob so that a new file re-runs CMake and joins the list.
function(sy_add_table_list target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "OUTPUT;HEADER;NAMESPACE;TABLE_TYPE;SUFFIX;FUNCTION;FUNCTION_TYPE" "SOURCES")
  add_custom_command(OUTPUT ${arg_OUTPUT}
    COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${arg_OUTPUT}" "-DSOURCE_ROOT=${CMAKE_SOURCE_DIR}" "-DSOURCES=${arg_SOURCES}"
      "-DHEADER=${arg_HEADER}" "-DNAMESPACE=${arg_NAMESPACE}" "-DTABLE_TYPE=${arg_TABLE_TYPE}"
      "-DSUFFIX=${arg_SUFFIX}" "-DFUNCTION=${arg_FUNCTION}" "-DFUNCTION_TYPE=${arg_FUNCTION_TYPE}"
      -P ${CMAKE_SOURCE_DIR}/cmake/write_table_list.cmake
    DEPENDS ${arg_SOURCES} ${CMAKE_SOURCE_DIR}/cmake/write_table_list.cmake
    COMMENT "Collecting ${arg_FUNCTION}()"
    VERBATIM)
  target_sources(${target} PRIVATE ${arg_OUTPUT})
endfunction()
