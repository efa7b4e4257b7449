/* Every libreducer error code has its own non-empty rb_strerror text (the
 * named failure lines quote it).  Prints "RB_ERR_NAME text" per code for
 * tests/harness/fail_named.sh, which looks the texts up here. */
#include "reducer.h"

#include <stdio.h>
#include <string.h>

static const char *const code_names[] = {
    "RB_OK", "RB_ERR_ARG", "RB_ERR_NOMEM", "RB_ERR_MPI", "RB_ERR_MISMATCH",
    "RB_ERR_UNKNOWN_REDUCER", "RB_ERR_UNSUPPORTED", "RB_ERR_DEVICE", "RB_ERR_STATE",
};
_Static_assert(sizeof code_names / sizeof code_names[0] == RB_ERR_COUNT_,
               "a new error code: name it here and walk it in tests/harness/fail_named.sh");

int main(void)
{
    int failures = 0;
    for (int c = 0; c < RB_ERR_COUNT_; c++) {
        const char *t = rb_strerror(c);
        if (!t || !*t) {
            fprintf(stderr, "test_strerror: %s has no text\n", code_names[c]);
            failures++;
            continue;
        }
        for (int d = 0; d < c; d++)
            if (!strcmp(t, rb_strerror(d))) {
                fprintf(stderr, "test_strerror: %s and %s share '%s'\n", code_names[d], code_names[c], t);
                failures++;
            }
        printf("%s %s\n", code_names[c], t);
    }
    const char *unknown = rb_strerror(RB_ERR_COUNT_);
    if (!unknown || !*unknown || !strcmp(unknown, rb_strerror(RB_ERR_ARG))) {
        fprintf(stderr, "test_strerror: no text for an unknown code\n");
        failures++;
    }
    return failures ? 1 : 0;
}
