/* The closed vocabularies of a spec: each enum's names as a spec writes them. The loader
 * matches against these tables, the schema lists them, and the renderers print them. */
#include "model/model.h"

#include "util/buf.h"

const og_attr_type_info og_attr_types[OG_ATTR_NTYPES] = {
    [OG_ATTR_BOOL] = {"bool", "bool", false},        [OG_ATTR_INT32] = {"int32", "int", true},
    [OG_ATTR_INT64] = {"int64", "int", true},        [OG_ATTR_FLOAT32] = {"float32", "float", false},
    [OG_ATTR_FLOAT64] = {"float64", "float", false},
};

const char *const og_vmap_names[OG_VMAP_NMETHODS] = {
    [OG_VMAP_NATIVE] = "native",           [OG_VMAP_NONE] = "none",
    [OG_VMAP_SEQUENTIAL] = "sequential",   [OG_VMAP_SEQUENTIAL_UNROLLED] = "sequential_unrolled",
    [OG_VMAP_EXPAND_DIMS] = "expand_dims", [OG_VMAP_BROADCAST_ALL] = "broadcast_all",
};

const char *const og_reduce_names[OG_REDUCE_NHOWS] = {
    [OG_REDUCE_SUM] = "sum",
    [OG_REDUCE_MAX] = "max",
    [OG_REDUCE_MIN] = "min",
};

const char *const og_deriv_kind_names[OG_DERIV_NKINDS] = {
    [OG_DERIV_ELEMENTWISE] = "elementwise",
    [OG_DERIV_JVP] = "jvp",
    [OG_DERIV_TRANSPOSE] = "transpose",
    [OG_DERIV_LINEAR] = "linear",
};

void og_vocab_list(og_buf *out, const char *const *names, size_t n, const char *last_sep) {
  for (size_t i = 0; i < n; ++i) og_buf_printf(out, "%s%s", i == 0 ? "" : i + 1 == n ? last_sep : ", ", names[i]);
}
