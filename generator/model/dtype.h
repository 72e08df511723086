/* The dtypes a spec may name, as the generator knows them: one enum and one table, both
 * expanded from opspec/dtypes.h's OPSPEC_DTYPES, so the loader, the checker and the
 * renderers read the runtime's own table (the integer column included) and never a
 * spelling of their own. */
#ifndef OG_DTYPE_H
#define OG_DTYPE_H

#include <stdbool.h>
#include <stddef.h>

#include "opspec/dtypes.h"

typedef enum og_dtype {
#define OG_DTYPE_ENUM(name, ctype, cutype, xla, np, integer) OG_DT_##name,
  OPSPEC_DTYPES(OG_DTYPE_ENUM)
#undef OG_DTYPE_ENUM
      OG_NDTYPES,
  OG_DT_NONE = -1, /* not a dtype name (a type variable's, or a mistake) */
} og_dtype;

typedef struct og_dtype_info {
  const char *name;  /* as a spec writes it */
  const char *ctype; /* the C type generated code uses */
  int xla;           /* the XLA_FFI_DataType code */
} og_dtype_info;

extern const og_dtype_info og_dtypes[OG_NDTYPES];

/* The dtype a spec names, or OG_DT_NONE. */
og_dtype og_dtype_find(const char *name);
/* An integer dtype (signed or unsigned, not bool): the table's integer column. */
bool og_dtype_is_integer(og_dtype dt);
/* A floating-point dtype: the ones a derivative may differentiate. */
bool og_dtype_is_float(og_dtype dt);

#endif /* OG_DTYPE_H */
