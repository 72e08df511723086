# Regenerates generated/ from specs/ and templates/ at build time.
#
# The generator writes only files whose text changed, so their timestamps cannot drive
# the rule: a stamp file does. Any spec, template or generator change reruns it; the
# compiler then rebuilds just the sources whose text moved.
file(GLOB OPSPEC_TEMPLATES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/templates/*.tmpl)
set(_opspec_relative_specs)
foreach(spec IN LISTS OPSPEC_SPECS)
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${spec})
  list(APPEND _opspec_relative_specs ${rel})
endforeach()
opspec_generated_sources(_opspec_byproducts)
set(OPSPEC_GENERATE_STAMP ${CMAKE_BINARY_DIR}/opspec_generate.stamp)
add_custom_command(
  OUTPUT ${OPSPEC_GENERATE_STAMP}
  COMMAND $<TARGET_FILE:opspec-gen> --quiet --out generated --templates templates ${_opspec_relative_specs}
  COMMAND ${CMAKE_COMMAND} -E touch ${OPSPEC_GENERATE_STAMP}
  DEPENDS opspec-gen ${OPSPEC_SPECS} ${OPSPEC_TEMPLATES}
  BYPRODUCTS ${_opspec_byproducts}
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
  COMMENT "opspec-gen: regenerating generated/ from specs/"
  VERBATIM)
add_custom_target(opspec_generate DEPENDS ${OPSPEC_GENERATE_STAMP})
