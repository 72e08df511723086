#include "model/dtype.h"

#include <string.h>

const og_dtype_info og_dtypes[OG_NDTYPES] = {
#define OG_DTYPE_INFO(name, ctype, cutype, xla, np, integer) [OG_DT_##name] = {#name, #ctype, xla},
    OPSPEC_DTYPES(OG_DTYPE_INFO)
#undef OG_DTYPE_INFO
};

og_dtype og_dtype_find(const char *name) {
  for (int i = 0; name && i < OG_NDTYPES; ++i)
    if (strcmp(og_dtypes[i].name, name) == 0) return (og_dtype)i;
  return OG_DT_NONE;
}

bool og_dtype_is_integer(og_dtype dt) { return dt != OG_DT_NONE && opspec_dtype_is_integer(og_dtypes[dt].xla); }

bool og_dtype_is_float(og_dtype dt) {
  return dt == OG_DT_float16 || dt == OG_DT_float32 || dt == OG_DT_float64 || dt == OG_DT_bfloat16;
}
