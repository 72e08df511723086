/* What a Python package may not be named, for `opspec-gen --package` (the rule
 * `opspec new` keeps too, in runtime/python/opspec/_scaffold.py, which also refuses a
 * module installed in its environment: opspec-gen cannot know those, and runs again for
 * an installed package, whose own name is then installed). */
#ifndef OG_PY_NAMES_H
#define OG_PY_NAMES_H

#include <stdbool.h>

/* A Python keyword (`class`, `import`, `None`): no import statement can name it. */
bool og_py_is_keyword(const char *name);
/* A top-level module of Python's standard library (`json`, `os`, `encodings`): a
 * package of that name would shadow it for every program of the environment. */
bool og_py_is_stdlib(const char *name);

#endif /* OG_PY_NAMES_H */
