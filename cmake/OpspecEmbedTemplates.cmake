# cmake -DOUT=<file.c> -P OpspecEmbedTemplates.cmake <template>...
#
# Writes the templates into a C file as byte arrays, so opspec-gen carries its templates
# and needs no folder next to it: an installed or copied binary generates the same code
# as the one in the build tree. Bytes, not string literals: C11 only promises 4095
# characters per literal.
set(templates)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 0 ${last})
  if(CMAKE_ARGV${i} MATCHES "\\.tmpl$")
    list(APPEND templates ${CMAKE_ARGV${i}})
  endif()
endforeach()
list(SORT templates)
set(body "/* Written by cmake/OpspecEmbedTemplates.cmake from templates/. Do not edit. */\n")
string(APPEND body "#include \"render/tmpl_embedded.h\"\n\n")
set(table "")
set(n 0)
foreach(path IN LISTS templates)
  get_filename_component(name ${path} NAME)
  file(READ ${path} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n  " bytes "${bytes}")
  string(APPEND body "static const char og_template_${n}[] = {\n  ${bytes}0x00};\n")
  string(APPEND table "    {\"${name}\", og_template_${n}},\n")
  math(EXPR n "${n} + 1")
endforeach()
string(APPEND body "\nconst og_embedded_template og_embedded_templates[] = {\n${table}    {0, 0},\n};\n")
file(WRITE ${OUT} "${body}")
