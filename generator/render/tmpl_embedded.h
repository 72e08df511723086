/* The templates built into opspec-gen (written at build time from templates/ by
 * cmake/OpspecEmbedTemplates.cmake), used unless --templates names a folder. */
#ifndef OG_TMPL_EMBEDDED_H
#define OG_TMPL_EMBEDDED_H

typedef struct og_embedded_template {
  const char *name; /* "op_ffi.c.tmpl" */
  const char *text; /* NUL-terminated */
} og_embedded_template;

/* Ends with {NULL, NULL}. */
extern const og_embedded_template og_embedded_templates[];

#endif /* OG_TMPL_EMBEDDED_H */
