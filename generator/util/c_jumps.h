/* The jumps in a piece of C that would leave it when it runs as the body of a loop the
 * generated code wraps around it (a portable kernel: docs/spec.md).
 *
 * The same light tokenizer as c_idents.h (comments, literals and preprocessor lines
 * skipped), and just enough of C's statements to know which loops and switches a jump
 * sits in: `for`, `while`, `do` and `switch`, with or without braces.
 */
#ifndef OG_C_JUMPS_H
#define OG_C_JUMPS_H

/* Calls `fn` for every `return` and `goto`, every `break` outside a loop or switch of
 * `code`'s own, and every `continue` outside a loop of its own, with the word, its line
 * (from 0 within `code`) and column (from 1). */
typedef void og_jump_fn(const char *word, int line, int col, void *ud);
void og_body_jumps(const char *code, og_jump_fn *fn, void *ud);

#endif /* OG_C_JUMPS_H */
